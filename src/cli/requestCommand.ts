// `agent-rl request TRAJECTORY`: an agent program's stored request (a turn of a run of env "agent") sent
// again to the run's policy as it is now (its saved checkpoint), and the answer printed beside the one
// stored — replay of one request, with no program started. Stored and generated text is printed
// through cell() / showInvisibles, as every read-side command does.
import { jsonText, showInvisibles } from '../shared/untrustedText';
import { openStore } from '../store/openStore';
import type { ResendResult } from '../shared/agentRequestView';
import { resendRequest } from '../store/resendRequest';
import { cell } from './format';
import { defineCommand } from './command';
import { DATABASE, databaseOf, JSON_OUTPUT } from './optionSets';
import { UsageError } from './usageError';

const REQUEST_USAGE = `agent-rl request TRAJECTORY [--turn K] [--greedy] [--seed N] [--checkpoint DIR] [--db FILE] [--json]
  send an agent program's stored request again to the run's policy as it is now; no program runs
  TRAJECTORY    a trajectory id of a run of your own agent program (env "agent")
  --turn        the turn whose request is sent again, from 0 (default: the last)
  --greedy      decode greedily (default: sample as the run sampled, from --seed)
  --seed        the sampling stream's seed (default 1)
  --checkpoint  the weights (default: the run's saved checkpoint beside the database)`;

/** What the command prints (pure: tests read it). */
export function requestText(r: ResendResult): string {
  const calls = r.toolCalls.map((c) => `  tool call: ${cell(c.name, 80)}(${cell(c.arguments, 400)})`);
  return [
    `trajectory ${r.trajectoryId} turn ${r.turn} (run ${r.runId}): ${r.messages} messages${r.tools.length ? `, tools ${r.tools.map((t) => cell(t, 60)).join(', ')}` : ''}, sent again to ${showInvisibles(r.checkpoint)} (${r.greedy ? 'greedy' : 'sampled'})`,
    `  stored answer: ${cell(r.stored, 600)}`,
    `  answer now:    ${cell(r.content ?? '', 600)}`,
    ...calls,
    `  ${r.promptTokens} prompt tokens, ${r.completionTokens} generated, finish ${r.finish}`,
  ].join('\n');
}

export const requestCommand = defineCommand({
  name: 'request',
  summary: "an agent program's stored request sent again to the run's policy as it is now",
  usage: REQUEST_USAGE,
  options: { turn: { type: 'string' }, greedy: { type: 'boolean' }, seed: { type: 'string' }, checkpoint: { type: 'string' } },
  sets: [DATABASE, JSON_OUTPUT],
  positionals: { min: 1, max: 1, error: 'request needs exactly one TRAJECTORY id (a number; the inspector shows it)' },
  run: async ({ values: v, positionals }) => {
    const ref = positionals[0]!;
    if (!/^\d+$/.test(ref)) throw new UsageError(`request needs exactly one TRAJECTORY id (a number; the inspector shows it)\n\n${REQUEST_USAGE}`);
    const whole = (name: string, text: string | undefined, min: number): number | undefined => {
      if (text === undefined) return undefined;
      const n = Number(text);
      if (!/^\d+$/.test(text) || n < min) throw new UsageError(`--${name} ${text}: give a whole number ≥ ${min}`);
      return n;
    };
    const turn = whole('turn', v.turn, 0);
    const seed = whole('seed', v.seed, 0) ?? 1;
    const { db, busyTimeoutMs } = databaseOf(v);
    const store = openStore(db, { busyTimeoutMs });
    try {
      const r = await resendRequest(store, db, {
        trajectoryId: Number(ref),
        ...(turn !== undefined ? { turn } : {}),
        greedy: v.greedy === true,
        seed,
        ...(v.checkpoint !== undefined ? { checkpoint: v.checkpoint } : {}),
      });
      process.stdout.write(`${v.json ? jsonText(r, 2) : requestText(r)}\n`);
      return 0;
    } finally {
      store.close();
    }
  },
});
