

# ---- the workspace's sandbox session (src/exporters/verl/python/workspaceSession.py) ----
# The exported workspace environment's tool and reward: the user's tools and reward run in `agent-rl
# sandbox serve`; each request sends agent_rl_tool_runner.py as the code and the file, the episode's calls
# and the limits as JSON on stdin.
#
# Settings: agent_rl_workspace.json beside this file (sandbox_url, which AGENT_RL_SANDBOX_URL overrides;
# the sandbox limits; the reward's settings; the tool names); the tool file and the reward file are the
# workspace's, copied into agent_rl_env/ and read as text.
SETTINGS = json.loads(_read_beside("agent_rl_workspace.json"))
RUNNER = _read_beside(SETTINGS["runner_file"])
SANDBOX_URL = os.environ.get("AGENT_RL_SANDBOX_URL", SETTINGS["sandbox_url"])
LIMITS = SETTINGS["limits"]


def run_in_sandbox(file, calls, reward=None):
    """Runs the runner with one file and an episode's calls (or one reward call) in a fresh sandbox process.

    Returns (answers, failure): the answers in order, and when there are fewer than asked, why the process
    stopped as the workbench words it: ("timeout", "no answer within N ms") or ("crashed", "...").
    """
    nonce = "@@agent-rl-%s@@" % uuid.uuid4().hex
    spec = {"nonce": nonce, "cap": LIMITS["output_cap_bytes"], "result_bytes": LIMITS["tail_bytes"], "file": file, "calls": calls, "reward": reward}
    # the workbench gives a call timeout_ms from when it reaches its session; a replay runs the import and
    # every earlier call first, so the whole run gets one allowance each
    seconds = LIMITS["timeout_ms"] / 1000.0 * (max(1, len(calls)) + 1)
    body = {"code": RUNNER, "language": "python", "stdin": json.dumps(spec), "run_timeout": seconds, "compile_timeout": seconds,
            "memory_limit_MB": LIMITS["memory_limit_mb"], "files": {}, "fetch_files": []}
    response = post_run_code(SANDBOX_URL, body, seconds)
    if response.get("status") == "SandboxError":
        raise SandboxUnavailable("agent-rl: the sandbox server failed: %s" % (response.get("message") or "SandboxError"))
    run = response.get("run_result") or {}
    answers = []
    for line in (run.get("stdout") or "").split("\n"):
        if line.startswith(nonce):
            answers.append(json.loads(line[len(nonce):]))
    expected = 1 if reward is not None else len(calls)
    if answers and "load_error" in answers[0]:
        raise SandboxUnavailable("agent-rl: %s does not import in the sandbox:\n%s" % (file["filename"], answers[0]["load_error"]))
    if len(answers) >= expected:
        return answers[:expected], None
    if run.get("status") == "TimeLimitExceeded":
        return answers, ("timeout", "no answer within %d ms" % LIMITS["timeout_ms"])
    tail = [l for l in (run.get("stderr") or "").strip().split("\n") if l.strip()][-1:]
    return answers, ("crashed", "the tool process exited (code %s)%s" % (run.get("return_code"), ": " + tail[0] if tail else ""))


def result_body(reply):
    """A call's result as the model reads it (the workbench's toolResultBody)."""
    if reply.get("ok"):
        return (reply.get("printed") or "") + (reply.get("result") or "")
    return "error: " + (reply.get("error") or reply.get("kind") or "failed")


RESTARTED = "[the tool process was restarted after a failure: earlier state is lost]\n"
STOPPED = "; the tool process was stopped, and the next call starts a fresh one (its state is lost)"


class Episode:
    """One episode's tool state as data: the calls since the last restart, replayed on each call."""

    def __init__(self, state):
        # state: a plain dict (it lives in verl's AgentData.extra_fields, which may be pickled)
        self.state = state
        state.setdefault("calls", [])
        state.setdefault("restarted", False)
        state.setdefault("replies", [])

    def call(self, file, name, kwargs):
        """Runs one call after replaying the earlier ones; returns (reply, metrics) as the workbench's session would."""
        earlier = self.state["calls"]
        calls = earlier + [{"name": name, "kwargs": kwargs}]
        answers, failure = run_in_sandbox(file, calls)
        restarted = self.state["restarted"]
        self.state["restarted"] = False
        metrics = {"replayed_calls": len(earlier)}
        # a replay that answers differently from the first time: the tools are not deterministic, and
        # the state the model sees now may differ from the state it saw
        metrics["replay_diverged"] = any(a != b for a, b in zip(answers, self.state["replies"]))
        if failure is not None and len(answers) < len(earlier):
            # an earlier call failed on replay: the state is lost as after a crash
            failure = failure if failure[0] == "timeout" else ("crashed", failure[1])
        if failure is not None:
            self.state["calls"], self.state["replies"], self.state["restarted"] = [], [], True
            return {"ok": False, "kind": failure[0], "error": failure[1] + STOPPED}, metrics
        reply = answers[-1]
        self.state["calls"], self.state["replies"] = calls, answers
        if restarted:
            reply = dict(reply, printed=RESTARTED + (reply.get("printed") or ""))
        return reply, metrics
