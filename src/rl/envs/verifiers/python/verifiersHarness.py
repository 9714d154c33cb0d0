# The harness around a verifiers environment (env "verifiers", verifiersEnv.ts), run with the user's
# Python as `python -c SOURCE CONFIG`, where CONFIG is JSON:
#   {"mode": "tasks", "module", "args", "root", "out", "maxTasks"}: loads the environment and writes its
#     datasets to the file `out` as {"train": [row…], "eval": [row…] | null}, a row being the dataset's
#     formatted record (example_id, prompt as chat messages, answer, info, task, its other columns; JSON-safe);
#   {"mode": "episode", "module", "args", "root", "successThreshold"}: loads the environment and plays the
#     row in AGENT_RL_TASK ({"id", "row"}) with the environment's own rollout and rubric, its client an
#     OpenAI chat-completions client at OPENAI_BASE_URL with OPENAI_API_KEY (the policy's endpoint, this
#     episode's URL); prints {"reward": r, "success": bool, <metric>: value…} as its last line.
# A failure prints one line naming the module, what failed and the fix to stderr, last, and exits 3.
import asyncio
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


def fail(what, fix):
    sys.stderr.write(f"verifiers environment {MODULE}: {what}. Fix: {fix}\n")
    sys.stderr.flush()
    sys.exit(3)


def exception_text(e):
    return f"{type(e).__name__}: {e}".splitlines()[0][:500] if str(e) else type(e).__name__


def load():
    root = CONFIG["root"]
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        import verifiers  # noqa: F401
    except Exception as e:
        fail(
            f"this Python ({sys.executable}) cannot import verifiers ({exception_text(e)})",
            "install it there (pip install verifiers==0.3.1), or name an interpreter that has it in envOptions.python",
        )
    try:
        mod = importlib.import_module(MODULE)
    except Exception as e:
        traceback.print_exc()
        fail(f"import failed ({exception_text(e)})", f"check that {MODULE}.py (or the package) is in {root} or installed in {sys.executable}, and that it imports")
    loader = getattr(mod, "load_environment", None)
    if not callable(loader):
        fail("the module defines no load_environment function", "define load_environment(**kwargs) returning a verifiers Environment")
    try:
        env = loader(**CONFIG["args"])
    except Exception as e:
        traceback.print_exc()
        fail(f"load_environment(**{json.dumps(CONFIG['args'])[:200]}) raised {exception_text(e)}", "check envOptions.args against the function's parameters")
    if not hasattr(env, "run_rollout") or not hasattr(env, "rubric"):
        fail(f"load_environment returned a {type(env).__name__}, not a verifiers Environment", "return e.g. vf.SingleTurnEnv(dataset=..., rubric=...)")
    return env


def plain(v):
    # a dataset cell as JSON: datasets gives dicts, lists and scalars; anything else as its text
    return json.loads(json.dumps(v, default=str))


def rows_of(ds, split, room):
    if ds is None:
        return None
    n = len(ds)
    if n > room:
        fail(
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
        fail(f"building its datasets raised {exception_text(e)}", "check the dataset the environment is built from")
    if train is None and held is None:
        fail("the environment has neither a dataset nor an eval_dataset", "give the Environment a dataset")
    train_rows = rows_of(train, "train", CONFIG["maxTasks"])
    eval_rows = rows_of(held, "eval", CONFIG["maxTasks"] - len(train_rows or []))
    with open(CONFIG["out"], "w", encoding="utf-8") as f:
        json.dump({"train": train_rows, "eval": eval_rows}, f)


class RubricErrors(logging.Handler):
    # verifiers' Rubric logs a reward function that raises and scores it 0: caught here, an error
    def __init__(self):
        super().__init__(logging.ERROR)
        self.messages = []

    def emit(self, record):
        text = record.getMessage()
        if text.startswith("Error calling reward function"):
            self.messages.append(text)


async def episode_mode(env):
    from verifiers.types import ClientConfig

    task = json.loads(os.environ["AGENT_RL_TASK"])
    errors = RubricErrors()
    logging.getLogger("verifiers").addHandler(errors)
    client = ClientConfig(api_base_url=os.environ["OPENAI_BASE_URL"], api_key_var="OPENAI_API_KEY", max_retries=0)
    try:
        out = await env.run_rollout(task["row"], client, "agent-rl-policy", {}, max_retries=0)
    except Exception as e:
        traceback.print_exc()
        fail(f"its rollout of task {task['id']} raised {exception_text(e)}", "run the environment with vf-eval against any model to find the fault")
    if errors.messages:
        fail(f"its rubric raised on task {task['id']} ({errors.messages[0][:400]}; verifiers would score it 0)", "fix the reward function: the run stops rather than train on a broken score")
    err = out.get("error")
    if err:
        fail(f"its rollout of task {task['id']} ended with an error ({json.dumps(plain(err))[:400]})", "see the episode's stderr")
    reward = out.get("reward")
    if not isinstance(reward, (int, float)) or not math.isfinite(reward):
        fail(f"its rubric gave no finite reward ({reward!r})", "return numbers from the reward functions")
    metrics = {k: v for k, v in (out.get("metrics") or {}).items() if isinstance(v, (int, float)) and math.isfinite(v) and k not in ("reward", "success")}
    print(json.dumps({"reward": float(reward), "success": float(reward) >= CONFIG["successThreshold"], **metrics}), flush=True)


ENV = load()
if CONFIG["mode"] == "tasks":
    tasks_mode(ENV)
else:
    asyncio.run(episode_mode(ENV))
