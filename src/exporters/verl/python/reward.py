# agent-rl reward for verl (0.9.1): reward.custom_reward_function.path=<this file>, .name=compute_score.
# Written by `agent-rl export verl` (from src/exporters/verl/python/reward.py in the workbench), standard
# library only. Code runs in the SandboxFusion-compatible server (`agent-rl sandbox serve`).
#
# It scores like the workbench's environments: calculator FORMAT_WEIGHT for a boxed integer + 1 when it
# is right; code 1 when the final ```python block passes the private verifier (hidden inputs against the
# reference solution, both run in the sandbox server), with the public example's check reported beside
# it; a workspace task set by its unit tests or by exact match on the last \boxed{}. The extra keys (acc,
# public_pass, private_pass, pred) land in verl's generation dumps, and `agent-rl import verl` turns them
# back into the run's public/private pass rates.
#
# Its settings are data in the files beside it: agent_rl_reward.json ({sandbox_url, format_weight,
# data_sources: {calculator, code, workspace}}) and agent_rl_verifier.py, the program the verifier runs
# in the sandbox (read as text and sent there, never imported here).
import json
import os
import re
import urllib.request
import uuid

_HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(_HERE, "agent_rl_reward.json"), encoding="utf-8") as _file:
    CONFIG = json.load(_file)
with open(os.path.join(_HERE, "agent_rl_verifier.py"), encoding="utf-8") as _file:
    VERIFIER = _file.read()
SANDBOX_URL = os.environ.get("AGENT_RL_SANDBOX_URL", CONFIG["sandbox_url"])
FORMAT_WEIGHT = CONFIG["format_weight"]
CALCULATOR_SOURCE = CONFIG["data_sources"]["calculator"]
CODE_SOURCE = CONFIG["data_sources"]["code"]
WORKSPACE_SOURCE = CONFIG["data_sources"]["workspace"]
BOXED = re.compile(r"\\boxed\{\s*(-?\d+)\s*\}")
PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.S)
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_references = {}


def run_code(code, timeout=10):
    body = {"code": code, "language": "python", "run_timeout": timeout, "compile_timeout": timeout, "memory_limit_MB": 1024,
            "stdin": None, "files": {}, "fetch_files": []}
    request = urllib.request.Request(SANDBOX_URL, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout + 30) as answer:
        return json.loads(answer.read())


def verdict(code, fn, calls):
    nonce = "@@verify-%s@@" % uuid.uuid4().hex
    # the verifier's inputs go in as one JSON string on its first line (see agent_rl_verifier.py)
    program = "_VERIFY = %s\n%s" % (json.dumps(json.dumps({"code": code, "fn": fn, "calls": calls, "nonce": nonce})), VERIFIER)
    stdout = (run_code(program).get("run_result") or {}).get("stdout") or ""
    for line in reversed(stdout.split("\n")):
        if line.startswith(nonce):
            return json.loads(line[len(nonce):])
    return {"error": "no verdict"}


def calculator_score(solution, truth):
    found = BOXED.findall(solution)
    pred = found[-1] if found else ""
    formatted = pred != ""
    correct = formatted and int(pred) == int(truth)
    return {"score": (FORMAT_WEIGHT if formatted else 0.0) + (1.0 if correct else 0.0), "acc": correct, "pred": pred,
            "public_pass": formatted, "private_pass": correct}


def code_score(solution, truth):
    task = json.loads(truth)
    fn = task["fn"]
    blocks = PYTHON_BLOCK.findall(solution)
    if not blocks or not IDENTIFIER.match(fn):
        return {"score": 0.0, "acc": False, "pred": "", "public_pass": False, "private_pass": False}
    code = blocks[-1]
    shown = run_code(code + "\nprint(%s(%s))\n" % (fn, task["public_args"]))
    lines = [l.strip() for l in ((shown.get("run_result") or {}).get("stdout") or "").split("\n") if l.strip()]
    public = shown.get("status") == "Success" and bool(lines) and lines[-1] == task["public_output"]
    key = (fn, task["reference"], tuple(task["hidden"]))
    expected = _references.get(key) or verdict(task["reference"], fn, task["hidden"])
    if "results" in expected:
        _references[key] = expected
    got = verdict(code, fn, task["hidden"])
    private = "results" in got and "results" in expected and got["results"] == expected["results"]
    return {"score": 1.0 if private else 0.0, "acc": private, "pred": "", "public_pass": public, "private_pass": private}


def normal(text):
    text = text.strip().rstrip(".").strip("$").strip().lower()
    return text.replace(",", "") if re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", text) else text


def last_boxed(text):
    at = text.rfind("\\boxed{")
    if at < 0:
        return None
    depth, start = 0, at + 7
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            if depth == 0:
                return text[start:i]
            depth -= 1
    return text[start:]


def same(a, b):
    a, b = normal(a), normal(b)
    if a == "" or b == "":
        return False
    if a == b:
        return True
    number = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?", re.I)
    if number.fullmatch(a) and number.fullmatch(b):
        return abs(float(a) - float(b)) <= 1e-6 * max(1.0, abs(float(b)))
    return False


def workspace_score(solution, truth):
    # a workspace task set: unit tests (the last python block with the tests) or exact match on the last \boxed{}
    if truth.startswith("{") and '"tests"' in truth:
        task = json.loads(truth)
        blocks = PYTHON_BLOCK.findall(solution)
        if not blocks or not task["tests"]:
            return {"score": 0.0, "acc": False, "pred": "", "public_pass": False, "private_pass": False}

        def passes(tests):
            return run_code(blocks[-1] + "\n\n" + "\n".join(tests) + "\n").get("status") == "Success"

        private = passes(task["tests"])
        public = passes(task["public_tests"]) if task["public_tests"] else private
        return {"score": 1.0 if private else 0.0, "acc": private, "pred": "", "public_pass": public, "private_pass": private}
    pred = last_boxed(solution)
    correct = pred is not None and same(pred, truth)
    return {"score": 1.0 if correct else 0.0, "acc": correct, "pred": pred or "", "public_pass": pred is not None, "private_pass": correct}


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    if data_source == WORKSPACE_SOURCE:
        return workspace_score(solution_str, ground_truth)
    if data_source == CALCULATOR_SOURCE:
        return calculator_score(solution_str, ground_truth)
    if data_source == CODE_SOURCE:
        return code_score(solution_str, ground_truth)
    raise NotImplementedError("agent-rl reward: unknown data_source %r" % (data_source,))
