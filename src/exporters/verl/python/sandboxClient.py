# agent-rl for verl: the tool classes and rewards `agent-rl export verl` writes (from
# src/exporters/verl/python/sandboxClient.py, the part they share, + the module's own part in the
# workbench). Standard library (and, in the tools, verl's BaseTool) only: nothing of the task, the tools or
# the model's output is evaluated here. Code runs in `agent-rl sandbox serve` (SandboxFusion's POST
# /run_code), which AGENT_RL_SANDBOX_URL points elsewhere (each module says where its URL comes from).
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


class SandboxUnavailable(RuntimeError):
    """The sandbox server failed (not the tool's fault): unreachable, or it answered SandboxError."""


def post_run_code(url, body, seconds):
    """POST body (a RunCodeRequest) to the /run_code URL; the RunCodeResponse as a dict.

    seconds: the run's own allowance; the HTTP wait is that plus 60 s. Raises SandboxUnavailable when the
    server cannot be reached or does not answer JSON.
    """
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        # an overloaded `sandbox serve` answers 504 before it starts the code: retried, as verl's own
        # SandboxFusion client does, with more patience (1, 2, 4, 8 s), so load never reads as a tool error
        for delay in (1, 2, 4, 8, None):
            try:
                with urllib.request.urlopen(request, timeout=seconds + 60) as answer:
                    return json.loads(answer.read())
            except urllib.error.HTTPError as e:
                if e.code != 504 or delay is None:
                    raise
                time.sleep(delay)
    except (urllib.error.URLError, OSError, ValueError) as e:
        raise SandboxUnavailable("agent-rl: the sandbox server at %s did not answer (%s). Fix: start `agent-rl sandbox serve` where verl reaches it, "
                                 "or set AGENT_RL_SANDBOX_URL" % (url.split("?")[0], e))
