# The calculator environment's reward for one single-turn episode, ported from the workbench
# (src/rl/envs/parsers.ts parseCalculatorAction, src/rl/envs/calculator/calculatorEnv.ts verify) so that
# TRL's GRPOTrainer (bench/peers_trl.py) trains on the reward the workbench's GRPO trains on. Standard
# library only. bench/peers.ts checks it against the workbench's own environment on a sample before every
# run (`python3 bench/peers_reward.py < cases.jsonl`), and test/unit/bench/peersReward.test.ts does too.
#
# Single turn: the bench runs the workbench with envOptions.maxCalls 1, so an episode is one generation
# that ends at the first stop string (</call> or </answer>, included) or after the token budget. An answer
# ends the episode; anything else (a call, a malformed turn) spends the one call of the budget and the
# episode ends unanswered. Reward = formatWeight · (answered) + (answer right) − callCost · (turns that
# were not an answer) − formatErrorCost · (malformed turns).
import json
import re
import sys

STOPS = ("</call>", "</answer>")
MAX_ACTION_CHARS = 64 * 1024
# re.ASCII: JavaScript's \d and \w are ASCII only (the character vocabulary is ASCII: 97 characters)
CALL_RE = re.compile(r"<call>\s*([A-Za-z_]\w*)\s*\(([^()<>]*)\)\s*</call>", re.ASCII)
ANSWER_RE = re.compile(r"<answer>\s*\\boxed\{\s*(-?\d+)\s*\}\s*</answer>", re.ASCII)


def cut_at_stop(text):
    """The text the workbench's sampler would have returned: up to and including the first stop string."""
    ends = [text.find(s) + len(s) for s in STOPS if s in text]
    return text[: min(ends)] if ends else text


def parse(text):
    """('answer', value) | ('call', op) | ('format_error', None), as parseCalculatorAction."""
    if text.strip() == "":
        return ("format_error", None)
    text = text[:MAX_ACTION_CHARS]
    answer = ANSWER_RE.search(text)
    if answer:
        # JavaScript's Number(): a float, so answers compare as the workbench compares them
        return ("answer", float(answer.group(1)))
    call = CALL_RE.search(text)
    if call:
        return ("call", call.group(1))
    return ("format_error", None)


def score(completion, gold, options):
    """{reward, success} of one single-turn episode; `options` holds the calculator's envOptions."""
    kind, value = parse(cut_at_stop(completion))
    formatted = kind == "answer"
    correct = formatted and value == float(gold)
    calls = 0 if formatted else 1
    format_errors = 1 if kind == "format_error" else 0
    reward = (
        (options["formatWeight"] if formatted else 0.0)
        + (1.0 if correct else 0.0)
        - options["callCost"] * calls
        - options["formatErrorCost"] * format_errors
    )
    return {"reward": reward, "success": bool(correct)}


if __name__ == "__main__":
    # one JSON case a line in ({completion, gold, options}), one {reward, success} a line out
    for line in sys.stdin:
        if line.strip():
            case = json.loads(line)
            print(json.dumps(score(case["completion"], case["gold"], case["options"])))
