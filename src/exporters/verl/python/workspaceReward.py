

# ---- the reward (src/exporters/verl/python/workspaceReward.py) ----
# verl 0.9.1: reward.custom_reward_function.path=<this file>, .name=compute_score; verl's reward
# managers call compute_score(data_source=, solution_str=, ground_truth=, extra_info=) with the decoded
# response (skip_special_tokens) and the row's extra_info, whose agent_rl_task holds the task as the
# workbench's reward reads it.
#
# The episode is rebuilt from the decoded text as the workbench's environment would have recorded the same
# actions in its hermes format: the text is cut into assistant turns at the tool responses, each turn is
# read by the workbench's parser (the first of a <tool_call> and an <answer>), and the calls are replayed
# in the sandbox to get their observations (the same runner the tool used), so a tool response the model
# wrote itself is never taken for one. Then the workspace's reward(task, trajectory) runs in the sandbox
# (or the built-in exact_match / unit_tests), and the format bonus and the call cost apply, as in
# scoreEpisode. A reward that raises or breaks its contract raises here too, as it fails a workbench run.
import math
import re

REWARD = SETTINGS["reward"]
TOOL_NAMES = SETTINGS["tool_names"]
TOOLS = {"source": _read_beside(SETTINGS["tools_file"]), "filename": SETTINGS["tools_filename"]} if SETTINGS.get("tools_file") else None
REWARD_FILE = {"source": _read_beside(REWARD["file"]), "filename": REWARD["filename"]} if REWARD.get("file") else None
MAX_ACTION_CHARS = SETTINGS["max_action_chars"]
RESERVED = SETTINGS["reserved_tool_names"]
ANSWER_RE = re.compile(r"<answer>([\s\S]*?)</answer>")
# no \s* around the group: with one, a long run of spaces after an unclosed <tool_call> backtracks in
# cubic time (model output, read on verl's host); json.loads ignores the whitespace anyway
HERMES_RE = re.compile(r"<tool_call>([\s\S]*?)</tool_call>")
# a tool message as chat templates render it (Qwen2.5 / Hermes: "<tool_response>\n...\n</tool_response>")
RESPONSE_RE = re.compile(r"<tool_response>\n?([\s\S]*?)\n?</tool_response>")
FIX = 'Fix: return a number, or a dict {"score": number, ...extras} (`agent-rl env check --config FILE` runs it on a recorded episode)'


class RewardError(RuntimeError):
    pass


def _no_constant(c):
    raise ValueError(c)


def verl_ran(text):
    """The <tool_call> verl's hermes parser executed in a turn it answered: the first whose JSON has a name and arguments (it skips the others)."""
    for m in HERMES_RE.finditer(text):
        try:
            call = json.loads(m.group(1), parse_constant=_no_constant)
        except (ValueError, RecursionError):
            continue
        if isinstance(call, dict) and "name" in call and "arguments" in call:
            return m
    return None


def parse_action(raw, answered=False):
    """The workbench's hermes parser (toolCalls.ts parseToolAction): ("answer", text), ("tool", name, args) or ("format", message).

    For a turn verl answered with a tool response (`answered`), the call is the one verl ran — the first
    it could read, even after an unreadable one or an <answer> — so the replayed state is verl's.
    """
    if raw.strip() == "":
        return ("format", 'empty output: write <tool_call>{"name": ..., "arguments": {...}}</tool_call> or <answer>...</answer>')
    text = raw[:MAX_ACTION_CHARS]
    ran = verl_ran(text) if answered else None
    answer = ANSWER_RE.search(text)
    call_at = text.find("<tool_call>")
    if ran is None and answer and (call_at < 0 or answer.start() < call_at):
        return ("answer", answer.group(1).strip())
    m = ran or HERMES_RE.search(text)
    if not m:
        if call_at >= 0:
            return ("format", "unclosed <tool_call>: end it with </tool_call>")
        return ("format", "unclosed answer: end it with </answer>" if "<answer>" in text else "no <tool_call> or <answer> found")
    try:
        call = json.loads(m.group(1), parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return ("format", 'the <tool_call> is not valid JSON: write {"name": "tool", "arguments": {...}}')
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        return ("format", 'the <tool_call> needs a "name" (text) and "arguments" (an object)')
    args = call.get("arguments")
    args = {} if args is None else args
    if not isinstance(args, dict):
        return ("format", '"arguments" must be a JSON object of parameter names and values')
    if call["name"] in RESERVED:
        return ("format", '"%s" is not a tool: end the episode with <answer>...</answer>' % call["name"][:40])
    return ("tool", call["name"], args)


def assistant_turns(solution):
    """The assistant's turns: the text between tool responses, and whether verl answered each with a tool response."""
    turns, at = [], 0
    for m in RESPONSE_RE.finditer(solution):
        turns.append((solution[at:m.start()], True))
        at = m.end()
    turns.append((solution[at:], False))
    return turns


def replay(calls):
    """The replies of an episode's tool calls, in one sandbox process (a fresh one after a call that stops it)."""
    replies, pending, restarted = [], list(calls), False
    while pending:
        answers, failure = run_in_sandbox(TOOLS, pending)
        for a in answers:
            replies.append(dict(a, printed=RESTARTED + (a.get("printed") or "")) if restarted else a)
            restarted = False
        if failure is None:
            break
        replies.append({"ok": False, "kind": failure[0], "error": failure[1] + STOPPED})
        pending, restarted = pending[len(answers) + 1:], True
    return replies


def trajectory_of(solution):
    """The episode as the workbench's WorkspaceEnv (hermes format) records it for the reward."""
    actions = []
    for text, answered in assistant_turns(solution):
        a = parse_action(text, answered)
        # verl ran no call for the last turn: a call there was cut by the turn cap or the length
        if not answered and a[0] == "tool":
            break
        actions.append(a)
        if a[0] == "answer":
            break
    steps, calls, answer = [], 0, None
    for a in actions:
        if a[0] == "answer":
            answer = a[1]
            steps.append(a)
            break
        calls += 1
        steps.append(a)
        if calls >= SETTINGS["max_calls"]:
            break
    known = [a for a in steps if a[0] == "tool" and a[1] in TOOL_NAMES]
    replies = iter(replay([{"name": a[1], "kwargs": a[2]} for a in known]) if known and TOOLS else [])
    turns, invalid = [], 0
    for a in steps:
        if a[0] == "answer":
            turns.append({"action": a[1], "tool": None, "observation": "answered", "error": None})
            continue
        if a[0] == "format":
            invalid += 1
            turns.append({"action": "", "tool": None, "observation": "<tool_response>error: %s</tool_response>" % a[1], "error": "format"})
            continue
        name, args = a[1], a[2]
        if name in TOOL_NAMES:
            reply = next(replies)
        else:
            shown = json.dumps(name[:40], ensure_ascii=False)
            reply = {"ok": False, "kind": "unknown_tool", "error": "unknown tool %s; %s" % (shown, "the tools are: " + ", ".join(TOOL_NAMES) if TOOL_NAMES else "this environment has no tools: answer directly")}
        failed = not reply.get("ok") and reply.get("kind") != "code"
        invalid += 1 if failed else 0
        turns.append({"action": json.dumps({"arguments": args}, separators=(",", ":"), ensure_ascii=False), "tool": name,
                      "observation": "<tool_response>%s</tool_response>" % result_body(reply), "error": (reply.get("kind") or "failed") if failed else None})
    formats = sum(1 for t in turns if t["error"] == "format")
    return {"turns": turns, "answer": answer, "code": None, "tool_calls": calls - formats, "invalid_calls": invalid}


def _normal(s):
    s = s.strip()
    s = s[:-1] if s.endswith(".") else s
    s = re.sub(r"^\$|\$$", "", s)
    return s.strip().lower()


def boxed_or_self(text):
    at = text.rfind("\\boxed{")
    if at < 0:
        return text.strip()
    depth = 0
    for i in range(at + 7, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            if depth == 0:
                return text[at + 7:i].strip()
            depth -= 1
    return text[at + 7:].strip()


def _decimal(s):
    t = s.replace(",", "") if re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", s) else s
    return float(t) if re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?", t, re.I) else None


def exact_match(answer, golds):
    """The workbench's exact_match (workspaceReward.ts), the golds as its scalarText wrote them."""
    if answer is None or golds is None:
        return False
    a = _normal(boxed_or_self(answer))
    for g0 in golds:
        g = _normal(boxed_or_self(g0))
        if a == "" or g == "":
            continue
        if a == g:
            return True
        x, y = _decimal(a), _decimal(g)
        if x is not None and y is not None and abs(x - y) <= 1e-6 * max(1.0, abs(y)):
            return True
    return False


def tests_pass(candidate, tests):
    if not tests:
        return False
    body = {"code": "%s\n\n%s\n" % (candidate, "\n".join(tests)), "language": "python", "stdin": None, "run_timeout": LIMITS["timeout_ms"] / 1000.0,
            "compile_timeout": LIMITS["timeout_ms"] / 1000.0, "memory_limit_MB": LIMITS["memory_limit_mb"], "files": {}, "fetch_files": []}
    request = urllib.request.Request(SANDBOX_URL, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=LIMITS["timeout_ms"] / 1000.0 + 60) as answer:
        run = json.loads(answer.read()).get("run_result") or {}
    return run.get("status") == "Finished" and run.get("return_code") == 0


def _finite(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def python_reward(task, trajectory):
    """The workspace's reward(task, trajectory) in the sandbox, read as workspaceReward.ts pythonReward reads it."""
    name = REWARD_FILE["filename"]
    answers, failure = run_in_sandbox(REWARD_FILE, [], {"task": task, "trajectory": trajectory})
    r = answers[0] if answers else {"ok": False, "kind": failure[0], "error": failure[1]}
    if not r.get("ok"):
        kind = r.get("kind")
        why = ("raised:\n" + (r.get("error") or "")) if kind == "raised" else "did not return in time (envOptions.timeoutMs)" if kind == "timeout" else "failed (%s): %s" % (kind or "unknown", r.get("error") or "")
        raise RewardError("%s: reward() %s. %s" % (name, why, FIX))
    text = r.get("result") or ""
    value = text
    if r.get("type") != "str":
        try:
            value = json.loads(text, parse_constant=_no_constant)
        except ValueError:
            raise RewardError("%s: reward() returned a %s that is not JSON (%s). %s" % (name, r.get("type") or "value", text[:80], FIX))
    if isinstance(value, bool):
        return {"score": 1.0 if value else 0.0, "extras": {}}
    if _finite(value) is not None:
        return {"score": float(value), "extras": {}}
    if not isinstance(value, dict):
        raise RewardError("%s: reward() returned %s %s, not a number. %s" % (name, r.get("type") or type(value).__name__, json.dumps(value)[:80], FIX))
    score = _finite(value.get("score"))
    if score is None:
        raise RewardError('%s: reward() returned a dict whose "score" is %s, not a finite number. %s' % (name, json.dumps(value.get("score")) if "score" in value else "missing", FIX))
    out = {"score": float(score), "extras": {k: v for k, v in value.items() if k != "score"}}
    for k, to in (("success", "success"), ("public_pass", "public_pass"), ("private_pass", "private_pass")):
        if isinstance(value.get(k), bool):
            out[to] = value[k]
    return out


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    info = extra_info or {}
    if "agent_rl_task" not in info:
        raise RewardError("agent-rl reward: extra_info.agent_rl_task is missing (data_source %r): this row was not written by `agent-rl export verl` "
                          "for a workspace environment. Fix: train on the train.parquet and test.parquet of the same export" % (data_source,))
    record = json.loads(info["agent_rl_task"])
    task = record["task"]
    trajectory = trajectory_of(solution_str)
    if REWARD["kind"] == "exact_match":
        base = {"score": 1.0 if exact_match(trajectory["answer"], record["golds"]) else 0.0, "extras": {}}
    elif REWARD["kind"] == "unit_tests":
        candidate = trajectory["code"] or trajectory["answer"] or ""
        private = tests_pass(candidate, task["private_tests"])
        public = tests_pass(candidate, task["public_tests"]) if task["public_tests"] else private
        base = {"score": 1.0 if private else 0.0, "public_pass": public, "private_pass": private, "extras": {}}
    else:
        base = python_reward(task, trajectory)
    success = base.get("success", base["score"] >= REWARD["success_threshold"])
    reward = base["score"] + (REWARD["format_bonus"] if trajectory["answer"] is not None else 0.0) - REWARD["call_cost"] * trajectory["tool_calls"]
    # the reward's numbers (and flags) beside the score, as the workbench plots them; keep the same keys on
    # every episode, as verl gathers each key into one column
    result = {k: v for k, v in base["extras"].items() if isinstance(v, (bool, int, float)) and k not in ("success", "public_pass", "private_pass")}
    result.update({"score": reward, "acc": bool(success), "public_pass": bool(base.get("public_pass", success)), "private_pass": bool(base.get("private_pass", success)),
                   "tool_calls": trajectory["tool_calls"], "invalid_calls": trajectory["invalid_calls"]})
    return result
