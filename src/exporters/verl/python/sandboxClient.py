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
from concurrent.futures import ThreadPoolExecutor

_HERE = os.path.dirname(os.path.abspath(__file__))


def _read_beside(name):
    with open(os.path.join(_HERE, name), encoding="utf-8") as f:
        return f.read()


class SandboxUnavailable(RuntimeError):
    """The sandbox server could not serve a request (not the code's fault): unreachable, an HTTP error (a
    refused token, 504 after the retries), or an answer that is not JSON. The workspace session raises it
    too for a SandboxError answer and for a tool file that does not import; the code tool shows a
    SandboxError answer to the model as `[sandbox error]` instead."""


# verl's agent loop runs its tokenizer work (the tool parser's decode, the chat template) on the event
# loop's default executor (loop.run_in_executor(None, ...)); the tools' blocking HTTP waits there could
# take all its threads under load and stall every trajectory of the worker. They wait on their own
# threads instead: `num_workers` in a tool's config (agent_rl_tools.yaml) caps the sandbox requests one
# verl agent-loop worker process has in flight through the tools with that setting (one pool per
# setting, shared by them); more calls wait for a thread.
DEFAULT_NUM_WORKERS = 32
_executors = {}


def tool_executor(config, tool):
    """The thread pool a tool runs its sandbox requests on, sized by its config's num_workers (threads)."""
    n = config.get("num_workers", DEFAULT_NUM_WORKERS) if isinstance(config, dict) else DEFAULT_NUM_WORKERS
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError("agent-rl: the %s tool's config has num_workers %r. Fix: a whole number of threads, 1 or more (default %d)"
                         % (tool, n, DEFAULT_NUM_WORKERS))
    if n not in _executors:
        _executors[n] = ThreadPoolExecutor(max_workers=n, thread_name_prefix="agent-rl-sandbox")
    return _executors[n]


def post_run_code(url, body, seconds):
    """POST body (a RunCodeRequest) to the /run_code URL; the RunCodeResponse as a dict.

    seconds: the run's own allowance; the HTTP wait is that plus 60 s. Raises SandboxUnavailable when the
    server cannot be reached, answers an HTTP error (504 after the retries) or does not answer JSON.
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
    except urllib.error.HTTPError as e:
        if e.code in (401, 403):
            raise SandboxUnavailable("agent-rl: the sandbox server at %s refused the token (HTTP %d). Fix: give the URL the server's token, "
                                     "http://HOST:PORT/run_code?token=T (sandbox_url, or AGENT_RL_SANDBOX_URL)" % (url.split("?")[0], e.code))
        raise SandboxUnavailable("agent-rl: the sandbox server at %s answered HTTP %d (%s). Fix: see the server's log; a 504 that persists "
                                 "means it is overloaded (raise its --concurrency or --queue, or lower num_workers)" % (url.split("?")[0], e.code, e.reason))
    except (urllib.error.URLError, OSError, ValueError) as e:
        raise SandboxUnavailable("agent-rl: the sandbox server at %s did not answer (%s). Fix: start `agent-rl sandbox serve` where verl reaches it, "
                                 "or set AGENT_RL_SANDBOX_URL" % (url.split("?")[0], e))
