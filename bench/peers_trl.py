# TRL's GRPOTrainer on the workbench's task set, for bench/peers.ts: one run of STEPS generation rounds
# from a Hugging Face checkpoint folder, then held-out greedy pass@1. Run by the peers venv's python
# (scripts/peersVenv.mjs: TRL 1.16, transformers, PyTorch 2.15 on the CPU):
#   python bench/peers_trl.py JOB.json OUT.json
# JOB.json (written by bench/peers.ts): {model, seed, threads, steps, groups, groupSize, maxNewTokens,
#   learningRate, warmupSteps, minibatch, clipLow, clipHigh, klCoef, maxGradNorm, temperature, envOptions,
#   train: [{prompt, gold}], heldOut: [{prompt, gold}]}
# OUT.json: {versions, rounds: [{seconds, generateSeconds, rewardMean}], heldOut: {greedyPassAt1, episodes},
#   setupSeconds, evalSeconds}
#
# One "step" is one generation round, as one workbench iteration: groups × groupSize completions sampled,
# scored, then trained in minibatches of `minibatch` completions (TRL: per_device_train_batch_size =
# minibatch, steps_per_generation = groups × groupSize / minibatch optimizer steps per round). A round's
# seconds run from the end of the previous round's last optimizer step to the end of its own (TRL's
# generation, the reward, the old and reference log-probs, the optimizer steps); generateSeconds is the
# time inside model.generate alone.
import json
import os
import sys
import time

import torch
from datasets import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
import transformers
import trl
from trl import GRPOConfig, GRPOTrainer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers_reward import STOPS, score  # noqa: E402


def main(job_file, out_file):
    with open(job_file, encoding="utf-8") as f:
        job = json.load(f)
    torch.set_num_threads(job["threads"])
    torch.manual_seed(job["seed"])
    t_setup = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(job["model"])
    model = AutoModelForCausalLM.from_pretrained(job["model"], dtype=torch.float32)
    options = job["envOptions"]
    batch = job["groups"] * job["groupSize"]
    if batch % job["minibatch"] != 0:
        raise SystemExit(f"groups × groupSize ({batch}) is not a multiple of minibatch ({job['minibatch']}): TRL splits a round into equal optimizer steps")
    per_round = batch // job["minibatch"]

    rounds = []
    state = {"generate": 0.0, "rewards": []}

    # the stop strings the workbench's sampler ends a turn at: transformers' generate needs the tokenizer
    # passed with them, which TRL's call does not, so the model's own generate is wrapped (and timed)
    plain_generate = model.generate

    def generate(*args, **kwargs):
        t = time.perf_counter()
        try:
            return plain_generate(*args, stop_strings=list(STOPS), tokenizer=tokenizer, **kwargs)
        finally:
            state["generate"] += time.perf_counter() - t

    model.generate = generate

    def reward(prompts, completions, gold, **_):
        scores = [score(c, g, options)["reward"] for c, g in zip(completions, gold)]
        state["rewards"].extend(scores)
        return scores

    class Rounds(TrainerCallback):
        def __init__(self):
            self.last = None

        def on_train_begin(self, args, st, control, **kwargs):
            self.last = time.perf_counter()

        def on_step_end(self, args, st, control, **kwargs):
            if st.global_step % per_round != 0:
                return
            now = time.perf_counter()
            rewards = state["rewards"]
            rounds.append({"seconds": now - self.last, "generateSeconds": state["generate"], "rewardMean": sum(rewards) / max(1, len(rewards))})
            self.last = now
            state["generate"] = 0.0
            state["rewards"] = []

    config = GRPOConfig(
        output_dir=os.path.join(os.path.dirname(os.path.abspath(out_file)), "trl-output"),
        seed=job["seed"],
        use_cpu=True,
        bf16=False,
        learning_rate=job["learningRate"],
        lr_scheduler_type="constant_with_warmup",
        warmup_steps=job["warmupSteps"],
        weight_decay=0.0,
        max_grad_norm=job["maxGradNorm"],
        per_device_train_batch_size=job["minibatch"],
        gradient_accumulation_steps=1,
        steps_per_generation=per_round,
        num_generations=job["groupSize"],
        max_completion_length=job["maxNewTokens"],
        temperature=job["temperature"],
        top_p=1.0,
        top_k=0,
        beta=job["klCoef"],
        epsilon=job["clipLow"],
        epsilon_high=job["clipHigh"],
        num_iterations=1,
        loss_type="grpo",
        scale_rewards="group",
        max_steps=job["steps"] * per_round,
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        remove_unused_columns=False,
        dataloader_num_workers=0,
        disable_tqdm=True,
    )
    dataset = Dataset.from_list([{"prompt": t["prompt"], "gold": t["gold"]} for t in job["train"]])
    trainer = GRPOTrainer(model=model, reward_funcs=reward, args=config, train_dataset=dataset, processing_class=tokenizer, callbacks=[Rounds()])
    setup_seconds = time.perf_counter() - t_setup
    trainer.train()

    t_eval = time.perf_counter()
    passed = greedy_pass(model, tokenizer, job["heldOut"], job["maxNewTokens"], options)
    result = {
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__, "trl": trl.__version__, "threads": torch.get_num_threads()},
        "rounds": rounds,
        "heldOut": {"greedyPassAt1": passed / len(job["heldOut"]), "episodes": len(job["heldOut"])},
        "setupSeconds": setup_seconds,
        "evalSeconds": time.perf_counter() - t_eval,
    }
    with open(out_file, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)


def greedy_pass(model, tokenizer, tasks, max_new_tokens, options, batch=50):
    """Held-out successes under greedy decoding (left-padded batches, the same stop strings)."""
    model.eval()
    tokenizer.padding_side = "left"
    passed = 0
    with torch.no_grad():
        for i in range(0, len(tasks), batch):
            chunk = tasks[i : i + batch]
            enc = tokenizer([t["prompt"] for t in chunk], return_tensors="pt", padding=True)
            out = model.generate(**enc, do_sample=False, max_new_tokens=max_new_tokens, pad_token_id=tokenizer.pad_token_id)
            texts = tokenizer.batch_decode(out[:, enc["input_ids"].shape[1] :], skip_special_tokens=True)
            passed += sum(1 for t, text in zip(chunk, texts) if score(text, t["gold"], options)["success"])
    return passed


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: python bench/peers_trl.py JOB.json OUT.json")
    main(sys.argv[1], sys.argv[2])
