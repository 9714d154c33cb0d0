

# ---- the built-in environments' tools (src/exporters/verl/python/builtinTools.py) ----
# verl 0.9.1 ships no SandboxFusionTool (its verl/tools/ holds base_tool, function_tool, schemas and
# tool_registry only), so the calculator, code and plain workspace exports name these BaseTool classes in
# agent_rl_tools.yaml. verl's tool registry (verl/tools/tool_registry.py, initialize_tools_from_config,
# which the agent loop's load_all_tools calls) imports this module by name (main_ppo.sh puts the export
# folder on PYTHONPATH; a Ray job's working_dir is on it) and makes each tool with its entry's `config`
# (a dict) and `tool_schema`. verl's agent loop creates, executes and releases a tool around each call.
#   AgentRlCalculatorTool  the calculator environment's tool, op(a, b) on integers (add, sub, mul, div as
#                          floor division), answered here: no code runs
#   AgentRlCodeTool        the code environment's execute_code: the model's code run in `agent-rl sandbox
#                          serve`, its output shown as the code environment shows an execution
# AgentRlCodeTool's config (written by `agent-rl export verl`): sandbox_url (the /run_code URL, which
# AGENT_RL_SANDBOX_URL overrides), timeout_ms, memory_limit_mb, tail_bytes (the environment's limits),
# num_workers (the threads its requests wait on, tool_executor: at most that many in flight per verl
# agent-loop worker process; absent, 32).
import re

from verl.tools.base_tool import BaseTool
from verl.tools.schemas import ToolResponse

CALCULATOR_OPS = ("add", "sub", "mul", "div")
# the calculator environment's integer argument (calculatorEnv.ts INT_RE, /^-?\d{1,15}$/): JavaScript's \d
# and $ are ASCII digits and the very end, where Python's \d takes any Unicode digit (int() reads them,
# "٣" is 3) and $ also matches before a final newline
INTEGER = re.compile(r"-?[0-9]{1,15}\Z")
# the server's message when its output cap killed the code (fusionProtocol.ts runOutcome)
OUTPUT_CAPPED = re.compile(r"^output passed (\d+) bytes")


def _argument_text(value):
    """An argument as the calculator's call text would have it: an integer's digits, a string as written."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, str)):
        return str(value).strip()
    return json.dumps(value, ensure_ascii=False)


def calculator_text(parameters):
    """The calculator environment's observation of op(a, b) (calculatorEnv.ts step), without its <obs> tags:
    verl's chat template frames a tool's answer itself."""
    op = parameters.get("op")
    op = op if isinstance(op, str) else json.dumps(op)
    args = [_argument_text(parameters[k]) for k in ("a", "b") if k in parameters]
    if op not in CALCULATOR_OPS:
        return "error: unknown op %s; use add, sub, mul or div" % op[:20]
    if len(args) != 2 or not all(INTEGER.match(a) for a in args):
        return "error: invalid args %s; use two integers" % ",".join(args)[:40]
    a, b = int(args[0]), int(args[1])
    if op == "add":
        return str(a + b)
    if op == "sub":
        return str(a - b)
    if op == "mul":
        return str(a * b)
    if b == 0:
        return "error: division by zero"
    return str(a // b)


def _tail(text, limit):
    """The last `limit` bytes of a stream, as the sandbox keeps them for the code environment (tailBytes)."""
    text = text or ""
    data = text.encode("utf-8")
    return text if len(data) <= limit else data[-limit:].decode("utf-8", "replace")


def execution_text(response, tail_bytes):
    """An execution as the code environment shows it (codeEnv.ts formatExecution), from the server's RunCodeResponse."""
    run = response.get("run_result") or {}
    if response.get("status") == "SandboxError":
        # the sandbox's own failure: no output of the code (run_result.stderr repeats the message)
        return "[sandbox error] %s\n[exit ?]" % (response.get("message") or "sandbox failed")
    parts = []
    stdout, stderr = _tail(run.get("stdout"), tail_bytes), _tail(run.get("stderr"), tail_bytes)
    if stdout:
        parts.append("[stdout]\n" + (stdout[:-1] if stdout.endswith("\n") else stdout))
    if stderr:
        parts.append("[stderr]\n" + (stderr[:-1] if stderr.endswith("\n") else stderr))
    timed_out = run.get("status") == "TimeLimitExceeded"
    if timed_out:
        parts.append("[timeout] killed after %d ms" % int((run.get("execution_time") or 0) * 1000 + 0.5))
    capped = OUTPUT_CAPPED.match(response.get("message") or "")
    if capped:
        parts.append("[output cut] more than %s bytes" % capped.group(1))
    code = run.get("return_code")
    # a process killed by a signal: the server reports -signal, the environment the signal (a timeout's kill is 9)
    shown = 9 if timed_out else (-code if code < 0 else code) if isinstance(code, int) else "?"
    parts.append("[exit %s]" % shown)
    return "\n".join(parts)


class AgentRlCalculatorTool(BaseTool):
    """The calculator environment's tool: add, sub, mul or div (floor division) of two integers."""

    async def execute(self, instance_id, parameters, **kwargs):
        text = calculator_text(parameters if isinstance(parameters, dict) else {})
        return ToolResponse(text=text), 0.0, {"error": text.startswith("error: ")}


class AgentRlCodeTool(BaseTool):
    """The code environment's execute_code: Python run in `agent-rl sandbox serve`, shown as the environment shows it."""

    def __init__(self, config, tool_schema):
        super().__init__(config, tool_schema)
        missing = [k for k in ("sandbox_url", "timeout_ms", "memory_limit_mb", "tail_bytes") if k not in config]
        if missing:
            raise ValueError("agent-rl: the %s tool's config lacks %s. Fix: use the agent_rl_tools.yaml `agent-rl export verl` wrote" % (self.name, ", ".join(missing)))
        self.url = os.environ.get("AGENT_RL_SANDBOX_URL", config["sandbox_url"])
        self.seconds = config["timeout_ms"] / 1000.0
        self.memory_mb = config["memory_limit_mb"]
        self.tail_bytes = config["tail_bytes"]
        self.executor = tool_executor(config, self.name)

    def run(self, code):
        """The server's RunCodeResponse for one program (raises SandboxUnavailable when the server cannot be reached)."""
        body = {"code": code, "language": "python", "stdin": None, "run_timeout": self.seconds, "compile_timeout": self.seconds,
                "memory_limit_MB": self.memory_mb, "files": {}, "fetch_files": []}
        return post_run_code(self.url, body, self.seconds)

    async def execute(self, instance_id, parameters, **kwargs):
        code = parameters.get("code") if isinstance(parameters, dict) else None
        if not isinstance(code, str):
            # the environment reads code from a ```python block, so it always has text; a call here may not
            text = 'format error: %s needs "code", the Python to run, as text' % self.name
            return ToolResponse(text=text), 0.0, {"format_error": True}
        response = await asyncio.get_running_loop().run_in_executor(self.executor, lambda: self.run(code))
        run = response.get("run_result") or {}
        metrics = {"timed_out": run.get("status") == "TimeLimitExceeded", "sandbox_error": response.get("status") == "SandboxError",
                   "exit_code": run.get("return_code")}
        return ToolResponse(text=execution_text(response, self.tail_bytes)), 0.0, metrics
