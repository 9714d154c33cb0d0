# agent-rl for verl: the exported workspace environment's tool and reward (written by `agent-rl export
# verl` from src/exporters/verl/python/sandboxClient.py + workspaceTool.py or workspaceReward.py in the
# workbench). Standard library (and, in the tool, verl) only: nothing of the task, the tools or the model's
# output is evaluated here. The user's tools and reward run in `agent-rl sandbox serve` (SandboxFusion's
# POST /run_code): each request sends agent_rl_tool_runner.py as the code and the file, the episode's
# calls and the limits as JSON on stdin.
#
# Settings: agent_rl_workspace.json beside this file (sandbox_url, which AGENT_RL_SANDBOX_URL overrides;
# the sandbox limits; the reward's settings; the tool names); the tool file and the reward file are the
# workspace's, copied into agent_rl_env/ and read as text.
import asyncio
import json
import os
import time
import urllib.error
import urllib.request
import uuid

_HERE = os.path.dirname(os.path.abspath(__file__))


def _read_beside(name):
    with open(os.path.join(_HERE, name), encoding="utf-8") as f:
        return f.read()


SETTINGS = json.loads(_read_beside("agent_rl_workspace.json"))
RUNNER = _read_beside(SETTINGS["runner_file"])
SANDBOX_URL = os.environ.get("AGENT_RL_SANDBOX_URL", SETTINGS["sandbox_url"])
LIMITS = SETTINGS["limits"]


class SandboxUnavailable(RuntimeError):
    """The sandbox server failed (not the tool's fault): unreachable, or it answered SandboxError."""


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
    request = urllib.request.Request(SANDBOX_URL, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        # an overloaded `sandbox serve` answers 504 before it starts the code: retried, as verl's own
        # SandboxFusion client does, with more patience (1, 2, 4, 8 s), so load never reads as a tool error
        for delay in (1, 2, 4, 8, None):
            try:
                with urllib.request.urlopen(request, timeout=seconds + 60) as answer:
                    response = json.loads(answer.read())
                break
            except urllib.error.HTTPError as e:
                if e.code != 504 or delay is None:
                    raise
                time.sleep(delay)
    except (urllib.error.URLError, OSError, ValueError) as e:
        raise SandboxUnavailable("agent-rl: the sandbox server at %s did not answer (%s). Fix: start `agent-rl sandbox serve` where verl reaches it, "
                                 "or set AGENT_RL_SANDBOX_URL" % (SANDBOX_URL.split("?")[0], e))
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


async def run_in_sandbox_async(file, calls, reward=None):
    return await asyncio.get_running_loop().run_in_executor(None, lambda: run_in_sandbox(file, calls, reward))


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
