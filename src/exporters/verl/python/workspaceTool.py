

# ---- the tool class (src/exporters/verl/python/workspaceTool.py) ----
# verl's tool config (agent_rl_tools.yaml) names this class once per tool of the workspace's tool file,
# each with that tool's schema: verl calls the one the model named. Per-episode state: the workbench runs
# an episode's tools in one process, so a tool can keep state in its module between calls. Each /run_code
# is a fresh process, so the episode's earlier calls are replayed before the new one, in one request
# (identical observations for tools whose answers depend only on the calls before them; a call costs one
# interpreter start, the file's import and every earlier call of the episode again: N calls run
# N(N+1)/2 tool calls in all). The episode's record is plain data: in verl's agent loop (which creates
# and releases an instance around every call, tool_agent_loop.py _call_tool) it lives in the episode's
# AgentData.extra_fields, shared by all the tools of the file, as one workbench session serves them all;
# a caller that keeps one instance for the episode (create → execute × N → release) gets it per instance.
from verl.tools.base_tool import BaseTool
from verl.tools.schemas import ToolResponse

TOOL_FILE = {"source": _read_beside(SETTINGS["tools_file"]), "filename": SETTINGS["tools_filename"]}
_STATE_KEY = "agent_rl_tools"
_instances = {}
_locks = {}


class AgentRlWorkspaceTool(BaseTool):
    """One tool of the workspace's tool file, run in the agent-rl sandbox server."""

    def __init__(self, config, tool_schema):
        super().__init__(config, tool_schema)
        # the calls wait for the sandbox on the tools' own threads, not verl's default executor (tool_executor)
        self.executor = tool_executor(config, self.name)

    async def create(self, instance_id=None, **kwargs):
        if instance_id is None:
            instance_id = uuid.uuid4().hex
        _instances.setdefault(instance_id, {})
        return instance_id, ToolResponse()

    def _episode(self, instance_id, agent_data):
        if agent_data is not None and isinstance(getattr(agent_data, "extra_fields", None), dict):
            key = "request:%s" % getattr(agent_data, "request_id", id(agent_data))
            return key, agent_data.extra_fields.setdefault(_STATE_KEY, {})
        return "instance:%s" % instance_id, _instances.setdefault(instance_id, {})

    async def execute(self, instance_id, parameters, **kwargs):
        key, state = self._episode(instance_id, kwargs.get("agent_data"))
        # calls of one episode run one at a time, in the order they came (max_parallel_calls > 1)
        lock = _locks.setdefault(key, [asyncio.Lock(), 0])
        lock[1] += 1
        try:
            async with lock[0]:
                # parameters: what verl parsed from the model's JSON; it goes to the sandbox as data
                reply, metrics = await asyncio.get_running_loop().run_in_executor(self.executor, lambda: Episode(state).call(TOOL_FILE, self.name, parameters))
        finally:
            lock[1] -= 1
            if lock[1] == 0:
                _locks.pop(key, None)
        metrics["ok"] = bool(reply.get("ok"))
        metrics["kind"] = reply.get("kind") or ""
        return ToolResponse(text=result_body(reply)), 0.0, metrics

    async def calc_reward(self, instance_id, **kwargs):
        # the workbench has no per-call reward: the episode is scored once, by compute_score
        # (agent_rl_workspace_reward.py) with the workspace's reward, format bonus and call cost
        return 0.0

    async def release(self, instance_id, **kwargs):
        _instances.pop(instance_id, None)
