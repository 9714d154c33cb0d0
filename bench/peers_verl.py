# What of a verl run of the workbench's `agent-rl export verl` output can be checked without a GPU, checked
# with verl's own code (verl 0.9.1 in the peers venv, scripts/peersVenv.mjs), for bench/peers.ts:
#   python bench/peers_verl.py EXPORT_DIR OUT.json
# 1. config: main_ppo.sh's overrides composed onto verl's ppo_trainer.yaml by Hydra (a key verl no longer
#    has fails here), then verl's own validate_config and its dataclasses (AlgoConfig, the actor's config);
# 2. data: train.parquet and test.parquet through verl's RLHFDataset (the filter of over-long prompts,
#    the chat template, the rows a trainer reads) and its collate_fn in a DataLoader batch;
# 3. reward: the reward file as main_ppo finds it (config.reward.custom_reward_function, verl 0.9's place
#    for it) loaded by load_reward_manager, and the manager scoring a few responses (a right answer, a
#    wrong one, an unformatted one) for held-out rows. verl 0.9.1's trainer reads the reward function from
#    config.reward.custom_reward_function only; the top-level custom_reward_function of verl ≤ 0.8 is
#    moved there by migrate_legacy_reward_impl, which only the fully-async entry point calls. Both are
#    reported: where the exported keys put it, and the manager's scores once it is found.
# 4. tools: the exported tool config (multi_turn.tool_config_path) loaded by verl's load_all_tools, the
#    function verl's agent loop worker calls (experimental/agent_loop/agent_loop.py), with the export folder
#    on the path as main_ppo.sh puts it, which must make every tool the rows call (their tools_kwargs; the
#    calculator for the calculator's rows: a calculator export without it fails); its calculator then answers a few calls as verl's
#    ToolAgentLoop makes them (create, execute, release), checked against the calculator environment's
#    answers. (verl 0.9.1 ships no SandboxFusionTool; the calculator and code exports name the workbench's
#    own classes, agent_rl_tools.py. test/integration/verlTools.test.ts runs the code tool against a real
#    sandbox server.)
# OUT.json: {verl, checks: [{name, ok, detail}]}; exits 0 even when a check fails (the bench reports them).
import asyncio
import json
import os
import re
import sys
import traceback


def overrides_of(main_ppo):
    """The key=value arguments of main_ppo.sh's `python3 -m verl.trainer.main_ppo` command."""
    with open(main_ppo, encoding="utf-8") as f:
        text = f.read()
    command = text[text.index("verl.trainer.main_ppo") + len("verl.trainer.main_ppo") :]
    return [a for a in re.split(r"\s*\\\n\s*|\s+", command.strip()) if "=" in a]


def main(export_dir, out_file):
    checks = []

    def check(name, fn):
        try:
            detail = fn()
            checks.append({"name": name, "ok": True, "detail": detail})
        except Exception as e:  # every failure is reported, not raised: the bench prints them
            checks.append({"name": name, "ok": False, "detail": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-2000:]})

    import verl
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf, open_dict

    # main_ppo.sh puts the export folder on PYTHONPATH: verl's tool registry imports the tool classes by module name
    sys.path.insert(0, os.path.abspath(export_dir))
    state = {}
    overrides = overrides_of(os.path.join(export_dir, "main_ppo.sh"))
    config_dir = os.path.join(os.path.dirname(verl.__file__), "trainer", "config")

    def compose_config():
        with initialize_config_dir(config_dir=config_dir, version_base=None):
            state["config"] = compose(config_name="ppo_trainer", overrides=overrides)
        return f"{len(overrides)} overrides composed onto ppo_trainer.yaml"

    check("config: main_ppo.sh's keys compose onto verl's ppo_trainer.yaml", compose_config)

    def validate():
        from verl.trainer.config import AlgoConfig
        from verl.trainer.ppo.utils import need_critic, need_reference_policy
        from verl.utils.config import omega_conf_to_dataclass, validate_config

        config = state["config"]
        validate_config(config=config, use_reference_policy=need_reference_policy(config), use_critic=need_critic(config))
        algo = omega_conf_to_dataclass(config.algorithm, AlgoConfig)
        actor = omega_conf_to_dataclass(config.actor_rollout_ref.actor)
        return f"validate_config passed; AlgoConfig adv_estimator={algo.adv_estimator}; actor {type(actor).__name__} clip {actor.clip_ratio_low}/{actor.clip_ratio_high}, kl_loss_coef {actor.kl_loss_coef}"

    check("config: verl's validate_config and its dataclasses", validate)

    def tokenizer():
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(state["config"].actor_rollout_ref.model.path)
        if not tok.chat_template:
            # a character-vocabulary checkpoint has none; a real verl run names an instruct model that has
            tok.chat_template = "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}{% if add_generation_prompt %}assistant: {% endif %}"
        state["tokenizer"] = tok
        return type(tok).__name__

    check("data: the model's tokenizer", tokenizer)

    def datasets():
        import torch
        from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn

        config = state["config"]
        sizes = {}
        for split, files in (("train", config.data.train_files), ("test", config.data.val_files)):
            ds = RLHFDataset(data_files=files, tokenizer=state["tokenizer"], config=config.data)
            loader = torch.utils.data.DataLoader(ds, batch_size=4, collate_fn=collate_fn)
            first = next(iter(loader))
            sizes[split] = len(ds)
            state.setdefault("rows", {})[split] = [ds.dataframe[i] for i in range(min(4, len(ds)))]
            if "raw_prompt" not in first or "data_source" not in first:
                raise ValueError(f"{split}: a batch without raw_prompt or data_source: {sorted(first)}")
        return f"RLHFDataset rows: train {sizes['train']}, test {sizes['test']}; DataLoader batches of 4 collate"

    check("data: the parquet files through RLHFDataset and its collate_fn", datasets)

    def tools():
        import pyarrow.parquet as pq
        from verl.tools.tool_registry import load_all_tools

        config = state["config"]
        path = OmegaConf.select(config, "actor_rollout_ref.rollout.multi_turn.tool_config_path")
        loaded = {t.name: t for t in load_all_tools(tool_config_path=path, function_tool_path=None)}
        detail = ", ".join(f"{name} ({type(t).__module__}.{type(t).__name__})" for name, t in loaded.items())
        # what the rows expect (read here, so this check stands apart from the data check): the tools their
        # tools_kwargs name, and for the calculator's task set (data_source agent-rl/calculator) the calculator
        rows = pq.read_table(config.data.train_files, columns=["data_source", "extra_info"]).slice(0, 64).to_pylist()
        named = sorted({name for r in rows for name, kw in ((r["extra_info"] or {}).get("tools_kwargs") or {}).items() if kw is not None})
        if any(r["data_source"] == "agent-rl/calculator" for r in rows) and "calculator" not in named:
            named.append("calculator")
        missing = [name for name in named if name not in loaded]
        if missing:
            raise ValueError(f"the rows call {', '.join(missing)}, which the tool config does not make (load_all_tools made {detail or 'nothing'})")
        if "calculator" not in loaded:
            return f"load_all_tools made {detail}, the tools the rows name ({', '.join(named) or 'none'}); no calls made (not a calculator export)"
        # the calculator environment's answers to the same calls (calculatorEnv.ts step, without its <obs> tags)
        calls = [
            ({"op": "add", "a": 3, "b": 4}, "7"),
            ({"op": "div", "a": 7, "b": -2}, "-4"),
            ({"op": "div", "a": 5, "b": 0}, "error: division by zero"),
            ({"op": "pow", "a": 2, "b": 3}, "error: unknown op pow; use add, sub, mul or div"),
            ({"op": "mul", "a": 2, "b": "x"}, "error: invalid args 2,x; use two integers"),
        ]

        async def run():
            answers = []
            tool = loaded["calculator"]
            for args, _ in calls:
                instance_id, _ = await tool.create(create_kwargs={})
                response, _, _ = await tool.execute(instance_id, args, agent_data=None)
                await tool.release(instance_id)
                answers.append(response.text)
            return answers

        answers = asyncio.run(run())
        wrong = [(args, got, expected) for (args, expected), got in zip(calls, answers) if got != expected]
        if wrong:
            raise ValueError(f"the calculator tool answers differently from the calculator environment: {wrong}")
        return f"load_all_tools made {detail}; it answered {len(calls)} calls (create, execute, release) as the calculator environment does"

    check("tools: the exported tool config through verl's load_all_tools, and calls executed", tools)

    def legacy_keys():
        config = state["config"]
        found = OmegaConf.select(config, "reward.custom_reward_function.path")
        legacy = OmegaConf.select(config, "custom_reward_function.path")
        if found:
            return f"config.reward.custom_reward_function.path = {found}"
        raise ValueError(
            f"the exported keys set the top-level custom_reward_function.path ({legacy}), which verl 0.9.1's main_ppo does not read "
            "(it reads config.reward.custom_reward_function; only migrate_legacy_reward_impl moves the old key there). "
            "Fix: export verl writes reward.custom_reward_function.path and .name"
        )

    check("reward: where main_ppo looks for the reward function", legacy_keys)

    def reward_manager():
        import numpy as np
        import torch
        from verl import DataProto
        from verl.experimental.reward_loop.reward_loop import migrate_legacy_reward_impl
        from verl.trainer.ppo.reward import load_reward_manager

        config = state["config"]
        if not OmegaConf.select(config, "reward.custom_reward_function.path"):
            with open_dict(config):
                config = migrate_legacy_reward_impl(config)
        tok = state["tokenizer"]
        manager = load_reward_manager(config, tok)
        scored = []
        for row in state["rows"]["test"][:3]:
            gold = row["reward_model"]["ground_truth"]
            for response, expected in ((f"<answer>\\boxed{{{gold}}}</answer>", 1.0), (f"<answer>\\boxed{{{int(gold) + 1}}}</answer>", 0.0), ("no answer", 0.0)):
                ids = torch.tensor([tok.encode(response, add_special_tokens=False)])
                data = DataProto.from_dict(
                    tensors={"responses": ids, "attention_mask": torch.ones_like(ids)},
                    non_tensors={"data_source": np.array([row["data_source"]], dtype=object), "reward_model": np.array([row["reward_model"]], dtype=object)},
                )
                # the manager keeps the event loop it was made on (its executor calls run there)
                out = manager.loop.run_until_complete(manager.run_single(data))
                scored.append({"response": response, "score": out["reward_score"], "expected": expected})
        wrong = [s for s in scored if abs(s["score"] - s["expected"]) > 1e-9]
        if wrong:
            raise ValueError(f"scores differ from the workbench's: {wrong}")
        return f"{type(manager).__name__} scored {len(scored)} responses as the workbench does (right 1, wrong 0, unformatted 0)"

    check("reward: verl's reward manager calls the exported reward on responses", reward_manager)

    with open(out_file, "w", encoding="utf-8") as f:
        json.dump({"verl": verl.__version__, "checks": checks}, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: python bench/peers_verl.py EXPORT_DIR OUT.json")
    main(sys.argv[1], sys.argv[2])
