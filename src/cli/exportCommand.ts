// `agent-rl export verl --config FILE --out DIR`: a run config as a verl run (see exporters/verl).
import { showInvisibles } from '../shared/untrustedText';
import { exportVerl } from '../exporters/verl/verlExport';
import { VerlExportError } from '../exporters/verl/verlTasks';
import { configFromArgs } from './runConfigArgs';
import { defineCommand } from './command';
import { UsageError } from './usageError';

const EXPORT_USAGE = `agent-rl export verl --config FILE --out DIR [--sandbox-url URL] [--model PATH] [--rollout sglang|vllm] [--gpus N] [--nodes N] [--dump-dir DIR]
  a run config as a verl run: its tasks as parquet, the reward and tool files, and the command lines
  FILE          a run config (JSON, as for train): env calculator (callCost and formatErrorCost 0), code or workspace (with its tool and reward files), method grpo
  --sandbox-url where verl reaches \`agent-rl sandbox serve\` (default http://127.0.0.1:8080/run_code; add ?token=T off loopback)
  --out         the folder the verl run is written to
  --model       actor_rollout_ref.model.path (default Qwen/Qwen2.5-0.5B-Instruct)
  --rollout     verl's multi-turn rollout engine (default sglang)
  --gpus, --nodes  trainer.n_gpus_per_node and trainer.nnodes (default 1 and 1)
  --dump-dir    trainer.rollout_data_dir/validation_data_dir parent (default DIR/dumps): what \`agent-rl import verl\` reads back`;

export const exportCommand = defineCommand({
  name: 'export',
  summary: 'a run config as a verl run (tasks, reward, tools and the command lines)',
  usage: EXPORT_USAGE,
  options: {
    config: { type: 'string' },
    out: { type: 'string' },
    'sandbox-url': { type: 'string' },
    model: { type: 'string' },
    rollout: { type: 'string' },
    gpus: { type: 'string' },
    nodes: { type: 'string' },
    'dump-dir': { type: 'string' },
  },
  sets: [],
  positionals: { min: 1, max: 1, error: 'export needs the format verl' },
  run: async ({ values: v, positionals }) => {
    if (positionals[0] !== 'verl') throw new UsageError(`export needs the format verl\n\n${EXPORT_USAGE}`);
    if (v.config === undefined || v.out === undefined) throw new UsageError(`export verl needs --config FILE and --out DIR\n\n${EXPORT_USAGE}`);
    const count = (flag: string, value: string | undefined): number => {
      const n = Number(value ?? '1');
      if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${flag} ${value}: use a whole number ≥ 1`);
      return n;
    };
    const rollout = v.rollout ?? 'sglang';
    if (rollout !== 'sglang' && rollout !== 'vllm') throw new UsageError(`--rollout ${rollout}: use sglang or vllm (verl's multi-turn rollout engines)`);
    const config = configFromArgs({ config: v.config });
    try {
      const r = await exportVerl(config, {
        outDir: v.out,
        sandboxUrl: v['sandbox-url'] ?? 'http://127.0.0.1:8080/run_code',
        model: v.model ?? 'Qwen/Qwen2.5-0.5B-Instruct',
        rollout,
        gpusPerNode: count('gpus', v.gpus),
        nodes: count('nodes', v.nodes),
        ...(v['dump-dir'] !== undefined ? { dumpDir: v['dump-dir'] } : {}),
      });
      // the command lines hold the run's name and paths as given: shown with their invisible characters
      // marked (the scripts written beside them hold them exactly)
      process.stdout.write(
        showInvisibles(
          `${r.trainRows} training and ${r.testRows} held-out tasks; wrote:\n${r.files.map((f) => `  ${f}`).join('\n')}\n\n${r.mainPpo}\n\n# or as a Ray job:\n${r.rayJob}\n`,
        ),
      );
      return 0;
    } catch (e) {
      if (e instanceof VerlExportError) throw new UsageError(e.message);
      throw e;
    }
  },
});
