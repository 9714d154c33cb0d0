# The harness around a verifiers environment (env "verifiers", verifiersEnv.ts), run with the user's
# Python as `python -c SOURCE CONFIG`, where CONFIG is JSON {"module", "args", "root", "out", "maxTasks",
# "successThreshold"}. It reads both of verifiers' environment formats, by the version that Python has:
#   - 0.3.x: the module's load_environment(**args) returns a vf.Environment; its dataset's rows are the
#     tasks, its eval_dataset's the held-out set, and an episode is env.run_rollout with its rubric;
#   - 0.4.x (verifiers.v1): the module exports a vf.Taskset subclass in __all__; args are its config's
#     fields; its tasks are the rows (no eval split: the workbench holds out a fraction), and an episode
#     is verifiers' own SingleAgentEnv.run_episode with its plain chat harness (null) on the local
#     subprocess runtime, the model calls relayed by verifiers' interception server to the endpoint,
#     scored by the task's @vf.reward methods (see docs/verifiers.md for what that leaves out).
# It loads the environment once, writes its datasets to the file `out` as
# {"train": [row…], "eval": [row…] | null, "source"?: text (0.4: what was loaded)} — a row being the dataset's formatted record (example_id,
# prompt as chat messages, answer, info, task, its other columns; JSON-safe) — and answers {"ready": true}
# on its stdout; a failure there is one line on stderr, last, naming the module, what failed and the fix
# (exit 3). Then it plays episodes as asyncio tasks, one JSON command a line on stdin:
#       {"op": "start", "id": n, "baseUrl", "key", "task": {"id", "row"}}: the row played with the
#         environment's own rollout and rubric, its client an OpenAI chat-completions client at baseUrl
#         (the policy's endpoint, this episode's URL) with key;
#       {"op": "stop", "id": n}: that episode's task cancelled;
#     and answers, one JSON line each on its stdout: {"id": n, "stdout": text}, {"id": n, "stderr": text},
#     then {"id": n, "exit": code} (0: it printed {"reward": r, "success": bool, <metric>: value…};
#     3: it failed, its stderr's last line naming the module, what failed and the fix; null: stopped).
#     Anything the environment prints goes to the harness's stderr, never into those lines. It ends when
#     its stdin closes.
import asyncio
import contextlib
import contextvars
import importlib
import importlib.util
import itertools
import json
import logging
import math
import os
import sys
import traceback

# datasets' progress bars are noise in an episode's stderr
os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
CONFIG = json.loads(sys.argv[1])
MODULE = CONFIG["module"]


class Failure(Exception):
    # what failed and the fix, as one line naming the module; detail: text for the episode's stderr
    # before that line (verifiers 0.4's recorded traceback), where no Python cause carries it
    def __init__(self, what, fix, detail=""):
        super().__init__(f"verifiers environment {MODULE}: {what}. Fix: {fix}")
        self.detail = detail


# the fixes for an environment of one format on a Python with the other
FIX_03 = "install verifiers==0.3.1 there (node scripts/pythonVenv.mjs verifiers-0.3.1 makes a venv with it), or name an interpreter that has it in envOptions.python"
FIX_04 = "install verifiers==0.4.0 there (node scripts/pythonVenv.mjs verifiers-0.4.0 makes a venv with it), or name an interpreter that has it in envOptions.python"


# the environment variable the endpoint's key is handed to verifiers' clients in: verifiers 0.4's
# subprocess runtime leaves every variable whose name contains API_KEY out of what it starts (the chat
# program, the tool servers: model-driven processes that must not hold the key)
KEY_VAR = "AGENT_RL_ENDPOINT_API_KEY"
# set (to 1) by a test: each 0.4 episode's reward line also counts the model clients verifiers'
# interception still holds for episodes that have ended (interception_clients_left; 0 when released)
SELF_CHECK = os.environ.get("AGENT_RL_VERIFIERS_SELF_CHECK") == "1"


def exception_text(e):
    return f"{type(e).__name__}: {e}".splitlines()[0][:500] if str(e) else type(e).__name__


def verifiers_version():
    import verifiers

    try:
        import importlib.metadata

        return importlib.metadata.version("verifiers")
    except Exception:
        return getattr(verifiers, "__version__", "unknown")


def reads_v1(version):
    try:
        major, minor = (int(p) for p in version.split(".")[:2])
        return (major, minor) >= (0, 4)
    except ValueError:
        import verifiers

        return not hasattr(verifiers, "Environment")


def written_for():
    # which format the module's source reads ("0.4": it imports verifiers.v1; "0.3": it defines
    # load_environment without it; None: unknown), for an import that failed before it could say
    # (a package's every .py file: its __init__.py may only re-export the taskset from a submodule)
    try:
        spec = importlib.util.find_spec(MODULE)
        files = [spec.origin]
        for folder in spec.submodule_search_locations or []:
            for dirpath, _dirs, names in os.walk(folder):
                files += [os.path.join(dirpath, n) for n in sorted(names) if n.endswith(".py")]
        text = ""
        for path in dict.fromkeys(files[:200]):
            with open(path, encoding="utf-8", errors="replace") as f:
                text += f.read()
    except Exception:
        return None
    if "verifiers.v1" in text:
        return "0.4"
    return "0.3" if "def load_environment" in text else None


def load():
    # the 0.3 Environment, or a V1Run for a 0.4 taskset (by the verifiers this Python has)
    root = CONFIG["root"]
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        import verifiers  # noqa: F401
    except Exception as e:
        raise Failure(
            f"this Python ({sys.executable}) cannot import verifiers ({exception_text(e)})",
            "install it there (pip install verifiers==0.3.1 for a load_environment module, verifiers==0.4.0 for a verifiers.v1 taskset), or name an interpreter that has it in envOptions.python",
        ) from None
    version = verifiers_version()
    # 0.4 and later read verifiers.v1 tasksets (0.3.1 ships an earlier draft of verifiers.v1 beside its
    # own API: the version, not the package's presence, says which one this Python reads)
    v1 = reads_v1(version)
    if v1:
        v1_process(root)
    try:
        mod = importlib.import_module(MODULE)
    except Exception as e:
        traceback.print_exc()
        other = written_for()
        if not v1 and other == "0.4":
            raise Failure(f"it is a verifiers 0.4 environment (it imports verifiers.v1; {exception_text(e)}), and this Python ({sys.executable}) has verifiers {version}", FIX_04) from None
        if v1 and other == "0.3":
            raise Failure(
                f"it is a verifiers 0.3 environment (load_environment; {exception_text(e)}), and this Python ({sys.executable}) has verifiers {version}, whose API moved to verifiers.v1",
                FIX_03,
            ) from None
        raise Failure(
            f"import failed ({exception_text(e)})",
            f"check that {MODULE}.py (or the package) is in {root} or installed in {sys.executable}, and that it imports",
        ) from None
    if v1:
        return V1Run(mod, version)
    loader = getattr(mod, "load_environment", None)
    if not callable(loader) and written_for() == "0.4":
        raise Failure(
            f"it is a verifiers 0.4 environment (a verifiers.v1 taskset), and this Python ({sys.executable}) has verifiers {version}, whose verifiers.v1 is an earlier draft the workbench does not read",
            FIX_04,
        )
    if not callable(loader):
        raise Failure("the module defines no load_environment function", "define load_environment(**kwargs) returning a verifiers Environment")
    try:
        env = loader(**CONFIG["args"])
    except Exception as e:
        traceback.print_exc()
        raise Failure(
            f"load_environment(**{json.dumps(CONFIG['args'])[:200]}) raised {exception_text(e)}",
            "check envOptions.args against the function's parameters",
        ) from None
    if not hasattr(env, "run_rollout") or not hasattr(env, "rubric"):
        raise Failure(f"load_environment returned a {type(env).__name__}, not a verifiers Environment", "return e.g. vf.SingleTurnEnv(dataset=..., rubric=...)")
    return env


def finite(v):
    # NaN and ±Infinity (pandas' missing cells) as null: strict JSON, which the workbench's parser reads
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [finite(x) for x in v]
    return v


def plain(v):
    # a dataset cell as JSON: datasets gives dicts, lists and scalars; anything else as its text
    return finite(json.loads(json.dumps(v, default=str)))


def rows_of(ds, split, room):
    if ds is None:
        return None
    n = len(ds)
    if n > room:
        raise Failure(
            f"its {split} dataset has {n} rows, more than the {CONFIG['maxTasks']} the run takes (envOptions.maxTasks, train and eval together)",
            "load fewer rows with the environment's own arguments (envOptions.args, e.g. a num_train_examples it reads), or raise envOptions.maxTasks",
        )
    out = []
    for i, r in enumerate(ds):
        # the whole record: a rollout and its rubric may read any column
        row = {k: plain(v) for k, v in r.items() if v is not None}
        row.setdefault("example_id", i)
        out.append(row)
    return out


def tasks_mode(env):
    try:
        train = env.build_dataset()
        held = env.build_eval_dataset()
    except Exception as e:
        traceback.print_exc()
        raise Failure(f"building its datasets raised {exception_text(e)}", "check the dataset the environment is built from") from None
    if train is None and held is None:
        raise Failure("the environment has neither a dataset nor an eval_dataset", "give the Environment a dataset")
    train_rows = rows_of(train, "train", CONFIG["maxTasks"])
    eval_rows = rows_of(held, "eval", CONFIG["maxTasks"] - len(train_rows or []))
    with open(CONFIG["out"], "w", encoding="utf-8") as f:
        json.dump({"train": train_rows, "eval": eval_rows}, f, allow_nan=False)


# the episode whose task is running: verifiers' Rubric logs a reward function that raises and scores
# it 0; the handler below files the message under that episode, which then fails instead
EPISODE_ERRORS = contextvars.ContextVar("agent_rl_episode_errors", default=None)


class RubricErrors(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)

    def emit(self, record):
        errors = EPISODE_ERRORS.get()
        text = record.getMessage()
        if errors is not None and text.startswith("Error calling reward function"):
            errors.append(text)


async def play(env, msg):
    # one episode (its own asyncio task, so EPISODE_ERRORS is its own): its reward line, or a Failure
    import verifiers as vf
    from verifiers.clients import resolve_client

    task = msg["task"]
    errors = []
    EPISODE_ERRORS.set(errors)
    # the run's key (the same for every episode), read from the environment when the client is built
    # (KEY_VAR: verifiers 0.4 keeps names with API_KEY out of the processes it starts)
    os.environ[KEY_VAR] = msg["key"]
    client = resolve_client(vf.ClientConfig(api_base_url=msg["baseUrl"], api_key_var=KEY_VAR, max_retries=0))
    try:
        out = await env.run_rollout(task["row"], client, "agent-rl-policy", {}, max_retries=0)
    except asyncio.CancelledError:
        raise
    except Exception as e:
        raise Failure(
            f"its rollout of task {task['id']} raised {exception_text(e)}",
            "run the environment with vf-eval against any model to find the fault",
        ) from e
    finally:
        # its connections closed: a run plays thousands of episodes in this one process
        await client.close()
    if errors:
        raise Failure(
            f"its rubric raised on task {task['id']} ({errors[0][:400]}; verifiers would score it 0)",
            "fix the reward function: the run does not train on a broken score",
        )
    err = out.get("error")
    if err:
        raise Failure(f"its rollout of task {task['id']} ended with an error ({json.dumps(plain(err))[:400]})", "see the episode's stderr")
    reward = out.get("reward")
    if not isinstance(reward, (int, float)) or not math.isfinite(reward):
        raise Failure(f"its rubric gave no finite reward ({reward!r})", "return numbers from the reward functions")
    metrics = {k: v for k, v in (out.get("metrics") or {}).items() if isinstance(v, (int, float)) and math.isfinite(v) and k not in ("reward", "success")}
    return json.dumps({"reward": float(reward), "success": float(reward) >= CONFIG["successThreshold"], **metrics})


# ---- verifiers 0.4 (verifiers.v1) -------------------------------------------------------------------


def v1_process(root):
    # what verifiers 0.4 starts for a rollout inherits this process's environment: its tool servers run
    # as `python -m <the taskset's module>` (so the module's folder on PYTHONPATH), and its chat harness
    # is a uv script (so this venv's uv, where pip installed it, first on PATH)
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in [root, os.environ.get("PYTHONPATH", "")] if p)
    os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])


class V1Run:
    # A verifiers 0.4 taskset (the class the module exports in __all__), loaded as verifiers loads it for
    # vf-eval — vf.load_environment of {"taskset": {"id": module, **args}} — with two choices of the run's
    # (not the module's): the agent's runtime is verifiers' local subprocess runtime (its default is Prime's
    # hosted sandboxes), and its harness the taskset's own where it ships one, else verifiers' plain chat
    # loop `null` (verifiers' default for a plain taskset, `bash`, gives the model a shell on this machine).
    def __init__(self, mod, version):
        import verifiers.v1 as vf
        from verifiers.v1.utils import loaders

        self.vf = vf
        exported = [getattr(mod, n, None) for n in getattr(mod, "__all__", None) or []]
        classes = [c for c in exported if isinstance(c, type)]
        tasksets = [c for c in classes if issubclass(c, vf.Taskset) and c is not vf.Taskset]
        if not tasksets:
            if callable(getattr(mod, "load_environment", None)):
                raise Failure(
                    f"it is a verifiers 0.3 environment (load_environment returning a vf.Environment), and this Python ({sys.executable}) has verifiers {version}, which reads verifiers.v1 tasksets",
                    FIX_03,
                )
            raise Failure(
                "the module exports no vf.Taskset subclass in __all__ (a verifiers 0.4 environment) and defines no load_environment (0.3)",
                'export the taskset class: __all__ = ["MyTaskset"]',
            )
        envs = [c for c in classes if issubclass(c, vf.Env)]
        if envs:
            raise Failure(
                f"its package ships its own Env ({envs[0].__name__}: several agents, or an episode of its own), and the workbench plays single-agent tasksets (verifiers' SingleAgentEnv)",
                "train a taskset without an Env of its own",
            )
        # verifiers finds a taskset by id: lowercased, and its built-in tasksets (verifiers.v1.tasksets.*)
        # first, so the id must lead to this module's class and not to another's
        try:
            resolved = loaders.taskset_class(MODULE)
        except Exception as e:
            resolved = e
        if resolved is not tasksets[0]:
            found = f"{resolved.__module__}.{resolved.__name__}" if isinstance(resolved, type) else exception_text(resolved)
            raise Failure(
                f"verifiers resolves the taskset id {MODULE!r} to {found}, not to {tasksets[0].__name__} of this module",
                "rename the module: a lowercase name that no verifiers.v1.tasksets package has",
            )
        task_cls = tasksets[0].task_type()
        harness = loaders.default_harness_id(MODULE)
        harness = "null" if harness == "bash" else harness
        try:
            harness_cls = loaders.harness_class(harness)
        except Exception as e:
            traceback.print_exc()
            raise Failure(
                f"its harness {harness!r} (the {MODULE} package's own, else verifiers' by that id) does not load ({exception_text(e)})",
                f"make {MODULE}'s harness import, or ship none (verifiers' plain chat loop, null, is used then)",
            ) from None
        # the subprocess runtime runs on this machine, unsandboxed: a harness that hands the model
        # execution (verifiers' EXECUTES_CODE, true for every harness but the tool-less chat loops, so
        # also for a subclass of bash under another name) would run the model's commands as you
        if harness_cls.EXECUTES_CODE:
            raise Failure(
                f"its harness {harness!r} ({harness_cls.__name__}) hands the model code execution (EXECUTES_CODE), and the workbench runs harnesses on verifiers' subprocess runtime on this machine, unsandboxed",
                "train a taskset whose harness is a tool-less chat loop (EXECUTES_CODE = False, as verifiers' null), its tools given as vf.Toolset servers",
            )
        if task_cls.NEEDS_CONTAINER or harness_cls.NEEDS_CONTAINER:
            raise Failure(
                f"its tasks ({task_cls.__name__}) or its harness ({harness}) need a container (NEEDS_CONTAINER), and the workbench runs them on verifiers' local subprocess runtime",
                "train a taskset whose tasks run without a container",
            )
        args = CONFIG["args"]
        try:
            config = vf.resolve_env_config({"taskset": {**args, "id": MODULE}, "agent": {"harness": {"id": harness}, "runtime": {"type": "subprocess"}}})
            self.env = vf.load_environment(config)
        except Exception as e:
            traceback.print_exc()
            raise Failure(
                f"loading its taskset {tasksets[0].__name__} with {json.dumps(args)[:200]} raised {exception_text(e)}",
                "check envOptions.args against the fields of the taskset's config",
            ) from None
        self.refuse_remote(task_cls)
        self.tasks = {}
        # the interception's client keys of the episodes playing now (see release_client)
        self.running = set()
        # how the run describes what it loaded (its preflight line)
        self.source = f"{MODULE}.{tasksets[0].__name__}(**{json.dumps(args)[:200]}) (a verifiers {version} taskset; harness {harness} on verifiers' subprocess runtime)"

    def refuse_remote(self, task_cls):
        # Only the agent's runtime is the run's choice; a tool server's (ToolsetConfig.runtime, from the
        # module or args.task.tools.runtime) is the taskset's, and one off this machine (docker, prime,
        # modal) would have verifiers expose its interception, the workbench's endpoint behind it,
        # through a Prime tunnel: both refused, before anything is served.
        from verifiers.v1.interception import requires_tunnel

        env = self.env
        taskset = env.taskset
        try:
            per_task = list(task_cls.toolsets(taskset.config.task))
            servers = per_task + list(type(taskset).toolsets(taskset.config))
        except Exception as e:
            traceback.print_exc()
            raise Failure(f"building its tool servers' configs raised {exception_text(e)}", "check the taskset's toolsets() and envOptions.args") from None
        runtimes = [(f"agent {name}", spec.runtime) for name, spec in env._agent_specs.items()]
        runtimes += [(f"tool server {type(s).__name__}", getattr(s.config, "runtime", None)) for s in servers]
        for who, runtime in runtimes:
            kind = getattr(runtime, "type", "subprocess") if runtime is not None else "subprocess"
            if kind != "subprocess":
                raise Failure(
                    f"its {who} asks for the {kind} runtime, and the workbench runs a taskset's processes on verifiers' subprocess runtime only (another would reach the run's endpoint through a tunnel)",
                    "leave the tool servers' runtime at subprocess (the taskset's ToolsetConfig.runtime, or envOptions.args.task.tools.runtime)",
                )
        # (the shared servers are consumers by their runtime alone, checked above)
        if requires_tunnel(env._runs_local(), [s.config for s in per_task]):
            raise Failure(
                "verifiers would expose its interception (and the run's endpoint behind it) through a tunnel: a consumer of it is off this machine",
                "run every tool server on this machine (subprocess runtime, no remote url)",
            )

    def write_rows(self):
        # the taskset's tasks as the rows (no eval split in 0.4: held out is the workbench's fraction)
        taskset = self.env.taskset
        room = CONFIG["maxTasks"]
        if not taskset.bounded:
            raise Failure("its taskset is infinite (INFINITE: its load() never ends)", "bound it with the taskset's own arguments (envOptions.args)")
        try:
            tasks = list(itertools.islice(iter(taskset), room + 1))
        except Exception as e:
            traceback.print_exc()
            raise Failure(f"building its tasks raised {exception_text(e)}", "check the data the taskset's load() reads") from None
        if len(tasks) > room:
            raise Failure(
                f"its taskset has more than the {room} rows the run takes (envOptions.maxTasks)",
                "load fewer rows with the taskset's own arguments (envOptions.args, e.g. a num_tasks its config has), or raise envOptions.maxTasks",
            )
        if not tasks:
            raise Failure("its taskset has no tasks", "give the taskset's load() some rows")
        rows = []
        for task in tasks:
            # the task's data, as verifiers records it on a trace (its defaults left out)
            row = plain(task.data.model_dump(mode="json", exclude_defaults=True))
            row["example_id"] = task.data.idx
            self.tasks[task.data.idx] = task
            rows.append(row)
        with open(CONFIG["out"], "w", encoding="utf-8") as f:
            json.dump({"train": rows, "eval": None, "source": self.source}, f, allow_nan=False)

    def serving(self):
        return self.env.serving()

    def interception_servers(self):
        # verifiers' interception while serving: one InterceptionServer, or a pool's servers
        interception = getattr(self.env, "_interception", None)
        if interception is None:
            return []
        servers = getattr(interception, "servers", None)
        return list(servers) if servers is not None else [interception]

    async def release_client(self, key):
        # verifiers' interception server keeps one model client (~830 KB and a connection) per distinct
        # client config until it stops, and each episode's base URL is its own: dropped here as the
        # episode ends, or a run of 5,000 episodes holds ~4 GB. Its exit stack also holds the client's
        # close (and so the client): that entry goes too, and the client is closed now.
        for server in self.interception_servers():
            clients = getattr(server, "clients", None)
            client = clients.pop(key, None) if isinstance(clients, dict) else None
            if client is None:
                continue
            callbacks = getattr(getattr(server, "stack", None), "_exit_callbacks", None)
            if callbacks is not None:
                for entry in list(callbacks):
                    if getattr(entry[1], "__wrapped__", None) == client.close:
                        callbacks.remove(entry)
            try:
                await client.close()
            except Exception:
                traceback.print_exc()

    async def play(self, msg):
        # one episode: verifiers' own run_episode (setup, the harness's turns through the endpoint, the
        # task's @vf.reward and @vf.metric methods), its client the episode's base URL with the run's key
        vf = self.vf
        task = msg["task"]
        played = self.tasks.get(task["row"].get("example_id"))
        if played is None:
            raise Failure(f"task {task['id']} is not one of its taskset's rows", "start the run again")
        os.environ[KEY_VAR] = msg["key"]
        ctx = vf.ModelContext(model="agent-rl-policy", client=vf.EvalClientConfig(base_url=msg["baseUrl"], api_key_var=KEY_VAR))
        key = ctx.client.model_dump_json()
        self.running.add(key)
        try:
            episode = await self.env.run_episode(played, ctx)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            raise Failure(f"its rollout of task {task['id']} raised {exception_text(e)}", "run the taskset with vf-eval against any model to find the fault") from e
        finally:
            self.running.discard(key)
            await self.release_client(key)
        errors = list(episode.errors) + [e for t in episode.traces for e in t.errors]
        if errors:
            err = errors[0]
            text = f"{err.type}: {err.message}".splitlines()[0][:400]
            if err.type == "TaskError" and " scoring: " in err.message:
                raise Failure(
                    f"its rewards raised on task {task['id']} ({text}; verifiers would record no reward)",
                    "fix the reward method: the run does not train on a broken score",
                    err.traceback or "",
                )
            raise Failure(f"its rollout of task {task['id']} ended with an error ({text})", "see the episode's stderr", err.traceback or "")
        reward = sum(t.reward for t in episode.traces)
        extras = {}
        for t in episode.traces:
            extras.update({k: r.score for k, r in t.rewards.items() if r is not None})
            extras.update({k: v for k, v in t.metrics.items() if isinstance(v, (int, float)) and math.isfinite(v)})
        extras = {k: v for k, v in extras.items() if k not in ("reward", "success")}
        extras["num_turns"] = sum(t.num_turns for t in episode.traces)
        if not math.isfinite(reward):
            raise Failure(f"its rewards gave no finite reward ({reward!r})", "return numbers from the reward methods")
        if SELF_CHECK:
            extras["interception_clients_left"] = sum(1 for s in self.interception_servers() for k in getattr(s, "clients", {}) if k not in self.running)
        return json.dumps({"reward": float(reward), "success": float(reward) >= CONFIG["successThreshold"], **extras})


async def serve(env, answer):
    logging.getLogger("verifiers").addHandler(RubricErrors())
    # a 0.4 taskset's serving resources (verifiers' interception server, shared tool servers), up for the run
    async with env.serving() if isinstance(env, V1Run) else contextlib.nullcontext():
        await serve_lines(env, answer)


async def serve_lines(env, answer):
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    tasks = {}

    async def episode(msg):
        n = msg["id"]
        try:
            line = await (env.play(msg) if isinstance(env, V1Run) else play(env, msg))
            answer({"id": n, "stdout": line + "\n"})
            answer({"id": n, "exit": 0})
        except asyncio.CancelledError:
            answer({"id": n, "exit": None})
        except Failure as f:
            cause = f.__cause__
            trace = "".join(traceback.format_exception(cause)) if cause is not None else f.detail
            answer({"id": n, "stderr": f"{trace}{f}\n"})
            answer({"id": n, "exit": 3})
        except Exception:
            answer({"id": n, "stderr": traceback.format_exc() + f"verifiers environment {MODULE}: the harness failed on this episode\n"})
            answer({"id": n, "exit": 3})
        finally:
            tasks.pop(n, None)

    while True:
        line = await reader.readline()
        if not line:
            break
        msg = json.loads(line)
        if msg["op"] == "start":
            tasks[msg["id"]] = asyncio.create_task(episode(msg))
        elif msg["op"] == "stop" and msg["id"] in tasks:
            tasks[msg["id"]].cancel()
    # stdin closed: what still runs is cancelled and awaited, so verifiers tears each episode down
    # (its chat program and tool servers stopped) before serving() ends
    running = list(tasks.values())
    for t in running:
        t.cancel()
    await asyncio.gather(*running, return_exceptions=True)


def become_subreaper():
    # Linux: verifiers' subprocess runtime starts the chat program and tool servers in sessions of
    # their own (start_new_session), out of reach of a kill of this process's group; as a child
    # subreaper (prctl PR_SET_CHILD_SUBREAPER) this process inherits any of them orphaned, and
    # kill_descendants ends them all as it exits
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except Exception:
        pass


def kill_descendants():
    # every process below this one (Linux, by /proc's parent links), SIGKILLed and reaped, until none
    import signal
    import time

    if not os.path.isdir("/proc"):
        return
    me = os.getpid()
    for _ in range(20):
        parents = {}
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    with open(f"/proc/{name}/stat", encoding="utf-8", errors="replace") as f:
                        parents[int(name)] = int(f.read().rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    pass
        below, frontier = set(), {me}
        while frontier:
            frontier = {pid for pid, ppid in parents.items() if ppid in frontier and pid not in below}
            below |= frontier
        for pid in below:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        if not below:
            return
        time.sleep(0.05)


def main():
    become_subreaper()
    try:
        # the answers go to the real stdout; what the environment prints, to stderr
        proto = os.fdopen(os.dup(1), "w", encoding="utf-8")
        os.dup2(2, 1)
        sys.stdout = sys.stderr

        def answer(m):
            proto.write(json.dumps(m) + "\n")
            proto.flush()

        env = load()
        if isinstance(env, V1Run):
            env.write_rows()
        else:
            tasks_mode(env)
        answer({"ready": True})
        asyncio.run(serve(env, answer))
    except Failure as f:
        sys.stderr.write(f"{f}\n")
        sys.stderr.flush()
        sys.exit(3)
    finally:
        kill_descendants()


main()
