# A verifiers environment (Prime Intellect's verifiers 0.3.x API), trained unchanged by the workbench:
# docs/verifiers.md. Sums of two numbers with an `add` tool (vf.ToolEnv: verifiers runs the model's
# calls and sends their results back), scored by a rubric with two reward functions: the answer, and
# whether the tool was called. Its eval dataset (larger numbers) is the run's held-out set.
import random

import verifiers as vf
from datasets import Dataset


def add(numbers: list[int]) -> int:
    """Add integers.

    Args:
        numbers: the integers to add
    """
    return sum(numbers)


def rows(n: int, low: int, high: int, seed: int) -> Dataset:
    rng = random.Random(seed)
    pairs = [(rng.randint(low, high), rng.randint(low, high)) for _ in range(n)]
    return Dataset.from_list([{"question": f"What is {a} + {b}?", "answer": str(a + b)} for a, b in pairs])


def load_environment(num_train: int = 200, num_eval: int = 40, max_turns: int = 3) -> vf.Environment:
    parser = vf.Parser()

    def correct(completion, answer, **kwargs) -> float:
        return 1.0 if (parser.parse_answer(completion) or "").strip() == answer else 0.0

    def used_tool(completion, **kwargs) -> float:
        return 1.0 if any((m.get("role") if isinstance(m, dict) else getattr(m, "role", None)) == "tool" for m in completion) else 0.0

    return vf.ToolEnv(
        dataset=rows(num_train, 1, 99, seed=1),
        eval_dataset=rows(num_eval, 100, 999, seed=2),
        system_prompt="Add the numbers with the add tool, then answer with the sum alone.",
        tools=[add],
        max_turns=max_turns,
        rubric=vf.Rubric(funcs=[correct, used_tool], weights=[1.0, 0.2], parser=parser),
    )
