"""Reward of the unit-converter environment, run in the sandbox after each episode.

task: {"id", "prompt", "ground_truth", "public_tests", "private_tests", "metadata"}
trajectory: {"turns": [{"action", "tool", "observation", "error"}], "answer", "code", "tool_calls", "invalid_calls"}
Return a number, or {"score": number, ...extras}: the extras are stored per episode and plotted.
"""


def reward(task, trajectory):
    answer = trajectory["answer"]
    try:
        correct = answer is not None and abs(float(answer) - float(task["ground_truth"])) < 1e-6
    except ValueError:
        correct = False
    return {"score": 1.0 if correct else 0.0, "answered": answer is not None, "invalid_calls": trajectory["invalid_calls"]}
