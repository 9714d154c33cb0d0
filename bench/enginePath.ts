// The engine against the small character-level GPT it replaced (issue 39), on `npm start`'s own
// workloads, in one run. The old side is the code of commit 4605f73, the last whose `npm start` trained
// the small GPT on tfjs-wasm with its own kernels and data-parallel replicas, built from the git
// history into a temporary folder beside this checkout (its dependencies are this checkout's: the
// package lists did not change); the new side is this checkout's CLI. Each side runs npm start's
// stages as npm start runs them: a supervised warm start on the calculator's demonstrations (its
// cores: the old one with a replica per core, the engine with a thread per core), then GRPO from that
// warm start on one core (one replica / one engine thread), both decoding under the action grammar,
// 512 characters of context. The sides alternate (old, new, old, new, …: ROUNDS pairs).
//   training: the warm start's demonstration tokens per second of its update phase — the same
//             demonstrations, token for token, on both sides (the character ids are the same);
//   sampling: GRPO's sampled tokens per second of its generation phase (each side samples its own
//             model, so the episodes differ; both write the calculator's short actions);
//   learning: GRPO's trained tokens per second of its reference and update phases.
// Printed: each side's rate per round, the median of the per-pair ratios engine / small GPT and their
// spread (min–max), and each side's estimated GFLOP/s (6 × parameters per trained token, 2 × per
// sampled token: matrix products only, attention left out). Target (issue 39): the engine is not
// slower on any of the three (median ratio ≥ 1).
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const OLD_COMMIT = '4605f73';
const ROUNDS = Number(process.env.AGENT_RL_BENCH_ROUNDS ?? 3);
const SFT_ITERATIONS = 20;
const GRPO_ITERATIONS = 3;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Iteration {
  readonly trajectories: number;
  readonly responseTokens?: number;
  readonly trainedTokens?: number;
  readonly phaseGenerateMs?: number;
  readonly phaseReferenceMs?: number;
  readonly phaseUpdateMs?: number;
}
interface Rates {
  readonly train: number;
  readonly sample: number;
  readonly learn: number;
  readonly parameters: number;
}

/** The old code, built once into a temporary folder (undefined, with why, where the history lacks it). */
function buildOld(): { cli: string; dir: string } | { missing: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-small-gpt-'));
  try {
    const tar = execFileSync('git', ['-C', ROOT, 'archive', '--format=tar', OLD_COMMIT], { maxBuffer: 1 << 30 });
    execFileSync('tar', ['-x', '-C', dir], { input: tar });
  } catch (e) {
    fs.rmSync(dir, { recursive: true, force: true });
    return { missing: `commit ${OLD_COMMIT} is not in this checkout's history (${(e as Error).message.split('\n')[0]}); a full clone has it` };
  }
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  execFileSync(process.execPath, ['esbuild.mjs'], { cwd: dir, stdio: 'ignore' });
  return { cli: path.join(dir, 'dist', 'cli.js'), dir };
}

function cli(bin: string, args: readonly string[], cwd: string): string {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`agent-rl ${args.join(' ')} (${bin}) exited with ${r.status}: ${r.stderr.slice(-2000)}`);
  return r.stdout;
}

const sum = (its: readonly Iteration[], f: (m: Iteration) => number): number => its.reduce((a, m) => a + f(m), 0);

/** One side's three rates: its warm start, then GRPO from it, as npm start runs them. */
function side(bin: string, kind: 'old' | 'new'): Rates {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `agent-rl-bench-${kind}-`));
  try {
    const db = path.join(dir, 'runs.sqlite');
    const json = (name: string, v: unknown): string => {
      const f = path.join(dir, name);
      fs.writeFileSync(f, JSON.stringify(v));
      return f;
    };
    const base = { env: 'calculator', policy: 'transformer', seed: 1, evalEpisodes: 1 };
    let model = '';
    if (kind === 'new') {
      model = path.join(dir, 'model');
      cli(bin, ['model', 'new', '--out', model, '--arch', 'qwen3', '--context', '512', '--seed', '1'], dir);
    }
    const sftOptions =
      kind === 'new' ? { model, loraRank: 0, constrainedDecoding: true, contextLength: 512 } : { constrainedDecoding: true, contextLength: 512 };
    // a stage of npm start: its config written beside the store, its record to <name>.out.json
    const stage = (command: 'sft' | 'train', name: string, config: unknown): string =>
      cli(bin, [command, '--config', json(`${name}.json`, config), '--db', db, '--output', path.join(dir, `${name}.out.json`)], dir);
    const sftOut = stage('sft', 'sft', { ...base, method: 'sft', iterations: SFT_ITERATIONS, policyOptions: sftOptions });
    const checkpoint = /checkpoint: (\S+)/.exec(sftOut)![1]!;
    const rlOptions = { init: checkpoint, constrainedDecoding: true, ...(kind === 'new' ? { threads: 1 } : { replicas: 1 }) };
    stage('train', 'grpo', { ...base, method: 'grpo', iterations: GRPO_ITERATIONS, policyOptions: rlOptions });
    const read = (f: string): { iterations: Iteration[]; runtime: { compute: string } } =>
      JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as { iterations: Iteration[]; runtime: { compute: string } };
    const sft = read('sft.out.json');
    const grpo = read('grpo.out.json');
    // the warm start's first iterations carry the engines' start-up: its second half is the steady state
    const steady = sft.iterations.slice(SFT_ITERATIONS / 2);
    const tokens = (m: Iteration): number => (m.responseTokens ?? 0) * m.trajectories;
    const parameters = Number(/([\d,]+) parameters/.exec(sft.runtime.compute)?.[1]?.replace(/,/g, '') ?? NaN);
    return {
      train: sum(steady, tokens) / (sum(steady, (m) => m.phaseUpdateMs ?? 0) / 1000),
      sample: sum(grpo.iterations, tokens) / (sum(grpo.iterations, (m) => m.phaseGenerateMs ?? 0) / 1000),
      learn: sum(grpo.iterations, tokens) / (sum(grpo.iterations, (m) => (m.phaseReferenceMs ?? 0) + (m.phaseUpdateMs ?? 0)) / 1000),
      parameters,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function main(): void {
  const old = buildOld();
  if ('missing' in old) {
    process.stdout.write(`skipped: ${old.missing}\n`);
    return;
  }
  try {
    const sides: { old: Rates[]; new: Rates[] } = { old: [], new: [] };
    for (let r = 0; r < ROUNDS; r++) {
      sides.old.push(side(old.cli, 'old'));
      sides.new.push(side(path.join(ROOT, 'dist', 'cli.js'), 'new'));
      process.stdout.write(`round ${r + 1}: small GPT ${JSON.stringify(sides.old.at(-1))}\n         engine    ${JSON.stringify(sides.new.at(-1))}\n`);
    }
    const fmt = (x: number): string => x.toFixed(0);
    let missed = false;
    process.stdout.write(`\nnpm start's workloads, ${ROUNDS} alternating pairs, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}:\n`);
    process.stdout.write(
      '| workload | small GPT, tokens/s (median) | engine, tokens/s (median) | engine / small GPT, median of pairs (min–max) | GFLOP/s small GPT / engine |\n|---|---|---|---|---|\n',
    );
    for (const [k, label, flops] of [
      ['train', 'warm start: SFT update on the demonstrations (both cores)', 6],
      ['sample', 'GRPO: sampling under the grammar (one core)', 2],
      ['learn', 'GRPO: reference and update passes (one core)', 6],
    ] as const) {
      const ratios = sides.new.map((n, i) => n[k] / sides.old[i]![k]);
      const o = median(sides.old.map((x) => x[k]));
      const n = median(sides.new.map((x) => x[k]));
      const gf = (rate: number, p: number): string => ((flops * p * rate) / 1e9).toFixed(2);
      if (median(ratios) < 1) missed = true;
      process.stdout.write(
        `| ${label} | ${fmt(o)} | ${fmt(n)} | ${median(ratios).toFixed(2)}× (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}) | ${gf(o, sides.old[0]!.parameters)} / ${gf(n, sides.new[0]!.parameters)} |\n`,
      );
    }
    process.stdout.write(`\ntarget: the engine not slower (median ratio ≥ 1) on every workload: ${missed ? 'MISSED' : 'met'}\n`);
    if (missed) process.exitCode = 1;
  } finally {
    fs.rmSync(old.dir, { recursive: true, force: true });
  }
}

main();
