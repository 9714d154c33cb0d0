# The harness around a verifiers environment (env "verifiers", verifiersEnv.ts), run with the user's
# Python as `python -c SOURCE CONFIG`, where CONFIG is JSON {"module", "args", "root", "out", "maxTasks",
# "successThreshold"}. It loads the environment once, writes its datasets to the file `out` as
# {"train": [row…], "eval": [row…] | null} — a row being the dataset's formatted record (example_id,
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
import contextvars
import importlib
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
    # what failed and the fix, as one line naming the module
    def __init__(self, what, fix):
        super().__init__(f"verifiers environment {MODULE}: {what}. Fix: {fix}")


def exception_text(e):
    return f"{type(e).__name__}: {e}".splitlines()[0][:500] if str(e) else type(e).__name__


def load():
    root = CONFIG["root"]
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        import verifiers  # noqa: F401
    except Exception as e:
        raise Failure(
            f"this Python ({sys.executable}) cannot import verifiers ({exception_text(e)})",
            "install it there (pip install verifiers==0.3.1), or name an interpreter that has it in envOptions.python",
        ) from None
    try:
        mod = importlib.import_module(MODULE)
    except Exception as e:
        traceback.print_exc()
        raise Failure(
            f"import failed ({exception_text(e)})",
            f"check that {MODULE}.py (or the package) is in {root} or installed in {sys.executable}, and that it imports",
        ) from None
    loader = getattr(mod, "load_environment", None)
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
    os.environ["AGENT_RL_ENDPOINT_KEY"] = msg["key"]
    client = resolve_client(vf.ClientConfig(api_base_url=msg["baseUrl"], api_key_var="AGENT_RL_ENDPOINT_KEY", max_retries=0))
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


async def serve(env, answer):
    logging.getLogger("verifiers").addHandler(RubricErrors())
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    tasks = {}

    async def episode(msg):
        n = msg["id"]
        try:
            line = await play(env, msg)
            answer({"id": n, "stdout": line + "\n"})
            answer({"id": n, "exit": 0})
        except asyncio.CancelledError:
            answer({"id": n, "exit": None})
        except Failure as f:
            cause = f.__cause__
            trace = "".join(traceback.format_exception(cause)) if cause is not None else ""
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
    for t in list(tasks.values()):
        t.cancel()


def main():
    try:
        # the answers go to the real stdout; what the environment prints, to stderr
        proto = os.fdopen(os.dup(1), "w", encoding="utf-8")
        os.dup2(2, 1)
        sys.stdout = sys.stderr

        def answer(m):
            proto.write(json.dumps(m) + "\n")
            proto.flush()

        env = load()
        tasks_mode(env)
        answer({"ready": True})
        asyncio.run(serve(env, answer))
    except Failure as f:
        sys.stderr.write(f"{f}\n")
        sys.stderr.flush()
        sys.exit(3)


main()
