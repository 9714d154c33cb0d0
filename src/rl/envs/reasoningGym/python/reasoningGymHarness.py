# The harness around reasoning-gym (a workspace environment's taskSet "reasoning-gym:<dataset>",
# reasoningGymTasks.ts), run with a Python that has reasoning-gym installed as `python -c SOURCE CONFIG`,
# CONFIG being JSON {"mode": ...}. Two modes:
#   {"mode": "generate", "dataset", "train": {config}, "heldOut": {config}, "out"}: checks the dataset's
#     name and both configs' keys against the dataset's config class, makes the held-out config (the
#     training config, size 100 and the next seed; unless heldOut says "harder": false, every difficulty
#     attribute of the dataset's curriculum one level above the training config's; then heldOut's own
#     fields over it), builds both datasets and writes
#     {"version", "train": {"config", "entries"}, "heldOut": {"config", "entries", "harder"}} to `out`,
#     an entry being the dataset's own {question, answer, metadata} (JSON-safe), then exits 0.
#   {"mode": "score", "datasets"?: [name]}: run inside the workbench's sandbox (answerScorer.ts), since
#     many scorers evaluate the answer's text. Once reasoning-gym is imported (and the named datasets'
#     scorers made) it writes {"ready": version} on a line; then one JSON array a line on stdin, each item {"dataset", "entry", "answer"}; one line on stdout per item,
#     in order (so the parent knows which answer a hang is on): the dataset's score_answer(answer, entry)
#     (a number 0–1), {"zero": text} when the answer ran the scorer out of memory or recursion or ended
#     its process (it scores 0), or {"error": text}. Each answer is scored in a forked child. It ends
#     when its stdin closes.
# A failure is one line on stderr, last, naming the dataset, what failed and the fix (exit 3).
import dataclasses
import difflib
import json
import math
import os
import sys

CONFIG = json.loads(sys.argv[1])


class Failure(Exception):
    pass


def exception_text(e):
    return f"{type(e).__name__}: {e}".splitlines()[0][:500] if str(e) else type(e).__name__


def import_gym():
    try:
        import reasoning_gym  # noqa: F401
        from reasoning_gym.factory import DATASETS
    except Exception as e:
        raise Failure(
            f"reasoning-gym: this Python ({sys.executable}) cannot import reasoning_gym ({exception_text(e)}). "
            "Fix: install it there (pip install reasoning-gym==0.1.25; `node scripts/pythonVenv.mjs reasoning-gym-0.1.25` makes a venv), "
            "or name an interpreter that has it in $AGENT_RL_REASONING_GYM_PYTHON"
        ) from None
    return reasoning_gym, DATASETS


def dataset_classes(name, datasets):
    if name not in datasets:
        near = difflib.get_close_matches(name, list(datasets), n=3)
        hint = f"did you mean {', '.join(near)}?" if near else f"it has {len(datasets)} datasets, e.g. {', '.join(sorted(datasets)[:8])}"
        raise Failure(
            f'reasoning-gym has no dataset "{name}" (version {version()}). Fix: name one in envOptions.taskSet as "reasoning-gym:<dataset>"; {hint}'
        )
    return datasets[name]


def version():
    try:
        from importlib.metadata import version as v

        return v("reasoning-gym")
    except Exception:
        return "unknown"


def check_keys(name, config_cls, given, option):
    fields = [f.name for f in dataclasses.fields(config_cls)]
    for key in given:
        if key not in fields:
            near = difflib.get_close_matches(key, fields, n=1)
            raise Failure(
                f'reasoning-gym dataset {name}: its config has no field "{key}" (envOptions.{option}). '
                f"Fix: {'did you mean ' + repr(near[0]) + '? ' if near else ''}its fields are {', '.join(fields)}"
            )


def curriculum_of(name):
    # (the dataset's curriculum: its difficulty attributes, each a ladder of levels)
    try:
        from reasoning_gym.factory import CURRICULA
    except Exception:
        return None
    cls = CURRICULA.get(name)
    return cls() if cls is not None else None


def harder_config(curriculum, train):
    """Each difficulty attribute of the curriculum one level above the training config's: its field (a
    range attribute's upper field) set to the first level above the training value, and a range's lower
    field just above the training range's top, so no held-out task is of a training setting on that
    attribute. Returns the config and {attribute: [low, high] or value} of what it raised."""
    harder = dict(train)
    raised = {}
    for attr_name, attr in curriculum.attributes.items():
        ranged = hasattr(attr, "lower_field_name")
        field = attr.upper_field_name if ranged else getattr(attr, "field_name", attr_name)
        current = train.get(field)
        try:
            above = [v for v in attr.levels if v > current]
        except TypeError:
            continue  # not an ordered value (a choice of words, a flag): left as in training
        if not above:
            continue  # at the top of its ladder already
        nxt = above[0]
        harder[field] = nxt
        if ranged:
            low = current + 1 if isinstance(current, int) and isinstance(nxt, int) and current + 1 <= nxt else current
            if low == nxt and getattr(attr, "ensure_interval", False):
                low = current
            harder[attr.lower_field_name] = low
            raised[attr_name] = [low, nxt]
        else:
            raised[attr_name] = nxt
    return harder, raised


def json_safe(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {str(k): json_safe(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set, frozenset)):
        return [json_safe(x) for x in v]
    if v is None or isinstance(v, (str, int, float, bool)):
        return v
    return str(v)


def build(gym, name, config_cls, config, option):
    try:
        cfg = config_cls(**config)
        if hasattr(cfg, "validate"):
            cfg.validate()
        ds = gym.create_dataset(name, **config)
        return [json_safe({"question": e["question"], "answer": e["answer"], "metadata": e.get("metadata", {})}) for e in ds]
    except Failure:
        raise
    except Exception as e:
        raise Failure(
            f"reasoning-gym dataset {name}: its config {json.dumps(config)[:300]} (envOptions.{option}) was refused: {exception_text(e)}. "
            "Fix: check the values against the dataset's config (its fields' ranges and their order)"
        ) from None


def generate():
    gym, datasets = import_gym()
    name = CONFIG["dataset"]
    _, config_cls = dataset_classes(name, datasets)
    train = dict(CONFIG["train"])
    check_keys(name, config_cls, train, "taskConfig")
    train.setdefault("size", 500)
    train.setdefault("seed", 0)
    given = dict(CONFIG["heldOut"])
    # "harder" is the workbench's key, not the dataset's: false keeps the training settings
    want_harder = given.pop("harder", True)
    if not isinstance(want_harder, bool):
        raise Failure(f'reasoning-gym dataset {name}: envOptions.heldOutConfig.harder is {json.dumps(want_harder)}. Fix: true or false')
    check_keys(name, config_cls, given, "heldOutConfig")
    held = {**train, "size": 100, "seed": train["seed"] + 1}
    raised = None
    if want_harder:
        curriculum = curriculum_of(name)
        base = {f.name: getattr(config_cls(**train), f.name) for f in dataclasses.fields(config_cls)}
        harder, raised = harder_config(curriculum, base) if curriculum is not None else (base, {})
        held.update({k: v for k, v in harder.items() if base.get(k) != v})
        settings = {k for k in given if k not in ("size", "seed")}
        if not raised and not settings:
            why = "has no curriculum" if curriculum is None else "is at the top of its curriculum in the training config"
            raise Failure(
                f"reasoning-gym dataset {name} {why}, so the workbench cannot make its held-out split harder by itself. "
                'Fix: name the held-out settings in envOptions.heldOutConfig, or {"harder": false} to hold out other tasks of the training settings'
                + ("" if curriculum is None else ", or train on easier settings")
            )
        raised = raised or None
    held.update(given)
    out = {
        "version": version(),
        "train": {"config": json_safe(train), "entries": build(gym, name, config_cls, train, "taskConfig")},
        "heldOut": {"config": json_safe(held), "entries": build(gym, name, config_cls, held, "heldOutConfig"), "harder": raised},
    }
    with open(CONFIG["out"], "w", encoding="utf-8") as f:
        json.dump(out, f)


def undumpable():
    # Linux: not dumpable, so code an answer runs in a child (same uid) cannot take this process's
    # stdout with pidfd_getfd or /proc/<pid>/fd and write scores for the answers after it
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except (OSError, AttributeError):
        pass


def score():
    _, datasets = import_gym()
    from reasoning_gym.factory import get_score_answer_fn
    made = {}
    undumpable()

    def one(item):
        name = item["dataset"]
        try:
            if name not in made:
                dataset_classes(name, datasets)
                # the dataset's own scorer (on a dataset of its default config: score_answer reads the entry)
                made[name] = get_score_answer_fn(name)
            s = float(made[name](item["answer"], item["entry"]))
            return s if math.isfinite(s) else 0.0
        except Failure as e:
            return {"error": str(e)}
        except (MemoryError, RecursionError) as e:
            # the sandbox's address-space limit or Python's recursion limit, reached by this answer
            return {"zero": f"score_answer ran out of {'memory' if isinstance(e, MemoryError) else 'recursion depth'} on this answer"}
        except Exception as e:
            return {"error": f"reasoning-gym dataset {name}: score_answer raised {exception_text(e)}"}

    def forked(item):
        # Each answer is scored in a forked child (copy-on-write: the import is not repeated), so code an
        # answer runs cannot change how later answers are scored (patch a scorer, leave a thread). Its
        # stdout goes to stderr: the result comes back through its own pipe. An answer can still forge
        # its own score, which no scorer that evaluates the answer in-process can prevent.
        name = item["dataset"]
        if name not in made:
            # the dataset's scorer made here, before any answer runs: its failure (an unknown dataset) is
            # the run's error; an "error" a child reports is the answer's zero (it may be forged)
            try:
                dataset_classes(name, datasets)
                made[name] = get_score_answer_fn(name)
            except Failure as e:
                return {"error": str(e)}
            except Exception as e:
                return {"error": f"reasoning-gym dataset {name}: its scorer could not be made: {exception_text(e)}"}
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            os.setpgid(0, 0)  # its own group: whatever the answer leaves running is killed with it below
            os.dup2(2, 1)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)  # not the scorer's stdin: the next batches are not the answer's to read
            try:
                res = one(item)
            except BaseException as e:  # noqa: BLE001 (SystemExit and KeyboardInterrupt included)
                res = {"zero": f"score_answer stopped on this answer ({exception_text(e)})"}
            try:
                os.write(w, json.dumps(res).encode())
            finally:
                os._exit(0)
        os.close(w)
        chunks = []
        while True:
            b = os.read(r, 65536)
            if not b:
                break
            chunks.append(b)
        os.close(r)
        _, status = os.waitpid(pid, 0)
        try:
            os.killpg(pid, 9)  # what the answer left running in its group
        except OSError:
            pass
        try:
            res = json.loads(b"".join(chunks).decode())
            if isinstance(res, dict) and "error" in res:
                return {"zero": str(res["error"])[:2000]}
            return res
        except ValueError:
            why = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit code {os.WEXITSTATUS(status)}"
            return {"zero": f"score_answer's process ended ({why}) on this answer without a score"}

    for name in CONFIG.get("datasets", []):
        # the run's datasets' scorers made before "ready", so the per-answer timeout counts answers alone
        # (a failure here is left to the first answer, which reports it)
        if name in datasets:
            try:
                made[name] = get_score_answer_fn(name)
            except Exception:
                pass
    sys.stdout.write(json.dumps({"ready": version()}) + "\n")
    sys.stdout.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        for x in json.loads(line):
            sys.stdout.write(json.dumps(forked(x) if hasattr(os, "fork") else one(x)) + "\n")
            sys.stdout.flush()


try:
    if CONFIG["mode"] == "generate":
        generate()
    elif CONFIG["mode"] == "score":
        score()
    else:
        raise Failure(f"reasoning-gym harness: unknown mode {CONFIG['mode']!r}")
except Failure as e:
    sys.stderr.write(f"{e}\n")
    sys.exit(3)
