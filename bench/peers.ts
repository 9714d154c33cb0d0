// The workbench beside the trainers a user would pick instead (issue 53, item 4): TRL 1.16's GRPOTrainer
// and verl 0.9.1, installed from PyPI into a cached venv by scripts/peersVenv.mjs (on scripts/torchVenv.mjs's
// CPU build of PyTorch 2.15).
//
// TRL: both trainers start from the same Hugging Face folder — npm start's model (`agent-rl model new`:
// Qwen3 architecture, 2 layers, width 64, the character tokenizer, 512 positions), warm-started by npm
// start's SFT stage so that the reward is not all zeros — on npm start's task set (the calculator's
// expressions, its train and held-out splits) and its GRPO settings as the workbench's defaults resolve
// them (group size, groups per step, generation length, learning rate and warm-up, minibatch, clip-higher,
// the KL coefficient, gradient clipping, temperature), one engine/torch thread each, full fine-tuning.
// One episode is one turn on both sides (envOptions.maxCalls 1: TRL's GRPOTrainer samples one completion
// per prompt, and the character model has no chat template for its tool calling): a completion ends at
// </call> or </answer> (TRL: transformers' stop strings) and is scored by the calculator's reward (TRL: its
// port, bench/peers_reward.py, checked against the environment on a sample before anything runs). Free
// decoding on both sides (TRL has no action grammar). Rounds interleave the sides (workbench then TRL,
// then TRL then workbench, …); each round is a fresh run of STEPS steps from the warm start, a step being
// one generation round (groups × group size completions) and its update. Per round each side's median
// seconds per step, generation and the rest (scoring, reference and old log-probs, optimizer steps) apart;
// the ratio TRL / workbench per round, then the median ratio with its spread (min–max) over rounds. Then
// held-out greedy pass@1 after the same steps on the 200 held-out expressions.
// Not run: the 0.5B shapes with LoRA (issue 53 asks for them too; not measured in this bench yet).
//
// verl: the workbench's `agent-rl export verl` of the same GRPO config, read by verl's own code without a
// GPU (bench/peers_verl.py): its config keys composed by Hydra and validated, the parquet files through
// RLHFDataset, the reward function called by verl's reward manager.
//
// Targets: the workbench faster per step (median ratio > 1), no worse held out (its mean greedy pass@1 over
// rounds ≥ TRL's), every verl check passed; exits non-zero on a miss. --smoke: tiny settings (a check of
// the bench, not a figure). --out DIR: the summary (peers.json) and verl's checks (verl.json) written there.
// Usage: node out/bench/peers.js [--smoke] [--rounds N] [--steps N] [--out DIR]
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { openCalculator } from '../src/rl/envs/calculator/calculatorEnv';
import { validateRunConfig } from '../src/shared/runConfig';
import { disagreements, portScores, rewardCases, rewardSettings, workbenchScores } from './peersReward';
import { describeRounds, peersTargets, type PeerRun } from './peersReport';

const ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const flag = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const smoke = process.argv.includes('--smoke');
const ROUNDS = flag('--rounds', smoke ? 2 : 3);
/** npm start's RL iterations. */
const STEPS = flag('--steps', smoke ? 2 : 25);
/** npm start's SFT iterations. */
const SFT_ITERATIONS = smoke ? 5 : 200;
/** The workbench's default is 32 groups of 8 (256 episodes a step); the smoke samples 4 groups. */
const GROUPS = smoke ? 4 : undefined;
const THREADS = 1;
const outAt = process.argv.indexOf('--out');
const OUT = outAt > 0 ? path.resolve(process.argv[outAt + 1]!) : undefined;

function cli(args: string[]): string {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) throw new Error(`agent-rl ${args.join(' ')}: exit ${r.status}\n${r.stdout}`);
  return r.stdout;
}

/** Runs a command to the end with its output in `log`; throws naming the log on failure. */
function runLogged(cmd: string, args: string[], log: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  return new Promise((resolve, reject) => {
    const out = fs.openSync(log, 'w');
    const child = spawn(cmd, args, { stdio: ['ignore', out, out], env });
    child.on('error', reject);
    child.on('close', (code) => {
      fs.closeSync(out);
      if (code === 0) resolve();
      else
        reject(
          new Error(
            `${path.basename(cmd)} ${args.map((a) => path.basename(a)).join(' ')}: exit ${code}; its output: ${log}\n${fs.readFileSync(log, 'utf8').slice(-3000)}`,
          ),
        );
    });
  });
}

const writeJson = (file: string, value: unknown): string => (fs.writeFileSync(file, `${JSON.stringify(value, null, 1)}\n`), file);

interface WorkbenchRecord {
  iterations: { wallMs: number; phaseGenerateMs: number; rewardMean: number }[];
  evaluations: { iteration: number; greedySuccessRate?: number; greedyEpisodes?: number }[];
  runtime: { compute: string };
}

interface TrlResult {
  versions: Record<string, string | number>;
  rounds: { seconds: number; generateSeconds: number; rewardMean: number }[];
  heldOut: { greedyPassAt1: number; episodes: number };
}

async function main(): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-peers-'));
  const venv = (await import(pathToFileURL(path.join(ROOT, 'scripts', 'peersVenv.mjs')).href)) as { ensurePeersVenv: () => string };
  const python = venv.ensurePeersVenv();

  // the model both start from: npm start's fresh Qwen3 folder, warm-started by npm start's SFT stage
  const model = path.join(work, 'model');
  cli(['model', 'new', '--out', model, '--arch', 'qwen3', '--context', '512', '--seed', '1']);
  const sftConfig = writeJson(path.join(work, 'sft.json'), {
    env: 'calculator',
    policy: 'transformer',
    method: 'sft',
    seed: 1,
    iterations: SFT_ITERATIONS,
    // no evaluation: each GRPO run evaluates the warm start at its iteration 0
    evalEpisodes: 0,
    policyOptions: { model, loraRank: 0, constrainedDecoding: false, contextLength: 512 },
  });
  const db = path.join(work, 'runs.sqlite');
  const sft = cli(['sft', '--config', sftConfig, '--db', db, '--output', path.join(work, 'sft-record.json')]);
  const init = /checkpoint: (\S+)/.exec(sft)?.[1];
  if (!init) throw new Error('the SFT run printed no checkpoint');

  const grpo = (seed: number) => ({
    env: 'calculator',
    policy: 'transformer',
    method: 'grpo',
    seed,
    iterations: STEPS,
    ...(GROUPS ? { groupsPerIteration: GROUPS } : {}),
    evalEpisodes: 200,
    evalPassK: 0,
    checkpointEvery: 0,
    envOptions: { maxCalls: 1 },
    policyOptions: { init, threads: THREADS, constrainedDecoding: false, loraRank: 0 },
    ...(GROUPS ? { algorithm: { minibatchSize: Math.min(64, GROUPS * 8) } } : {}),
  });
  const config = validateRunConfig(grpo(1));
  if (config.env !== 'calculator' || config.policy !== 'transformer') throw new Error('a calculator transformer config');
  const tasks = openCalculator(config.envOptions).tasks();
  const asRows = (ts: typeof tasks.train) => ts.map((t) => ({ prompt: t.prompt, gold: Number(t.data.answer) }));

  // the port agrees with the environment, else nothing runs
  const cases = rewardCases(tasks.heldOut.slice(0, 20), rewardSettings(config.envOptions));
  const differ = disagreements(cases, await workbenchScores(cases), portScores(python, cases));
  if (differ.length > 0) throw new Error(`bench/peers_reward.py disagrees with the calculator environment:\n${differ.slice(0, 5).join('\n')}`);
  console.log(`reward port: bench/peers_reward.py agrees with the calculator environment on ${cases.length} completions`);

  const a = config.algorithm;
  const job = (seed: number) => ({
    model: init,
    seed,
    threads: THREADS,
    steps: STEPS,
    groups: config.groupsPerIteration,
    groupSize: config.groupSize,
    maxNewTokens: config.policyOptions.maxNewTokens,
    learningRate: a.learningRate,
    warmupSteps: a.warmupSteps,
    minibatch: a.minibatchSize,
    clipLow: a.clipLow,
    clipHigh: a.clipHigh,
    klCoef: a.klCoef,
    maxGradNorm: a.maxGradNorm,
    temperature: config.policyOptions.temperature,
    envOptions: config.envOptions,
    train: asRows(tasks.train),
    heldOut: asRows(tasks.heldOut),
  });
  const threadEnv = { ...process.env, OMP_NUM_THREADS: String(THREADS), MKL_NUM_THREADS: String(THREADS) };

  const runs: PeerRun[] = [];
  let compute = '';
  let versions: Record<string, string | number> = {};
  for (let round = 0; round < ROUNDS; round++) {
    const seed = round + 1;
    const sides = round % 2 === 0 ? (['workbench', 'trl'] as const) : (['trl', 'workbench'] as const);
    for (const side of sides) {
      process.stderr.write(`round ${round + 1}/${ROUNDS}: ${side}\n`);
      if (side === 'workbench') {
        const file = writeJson(path.join(work, `grpo-${seed}.json`), grpo(seed));
        const record = path.join(work, `grpo-${seed}-record.json`);
        await runLogged(process.execPath, [CLI, 'train', '--config', file, '--db', db, '--output', record], path.join(work, `grpo-${seed}.log`));
        const r = JSON.parse(fs.readFileSync(record, 'utf8')) as WorkbenchRecord;
        compute = r.runtime.compute;
        runs.push({
          side,
          round,
          steps: r.iterations.map((it) => ({
            // wallMs leaves the evaluations out (they are phaseEvaluateMs, beside it)
            seconds: it.wallMs / 1000,
            generateSeconds: it.phaseGenerateMs / 1000,
            rewardMean: it.rewardMean,
          })),
          greedyPassAt1: r.evaluations.at(-1)?.greedySuccessRate ?? NaN,
          warmStartPassAt1: r.evaluations[0]?.greedySuccessRate,
        });
      } else {
        const jobFile = writeJson(path.join(work, `trl-${seed}-job.json`), job(seed));
        const out = path.join(work, `trl-${seed}.json`);
        await runLogged(python, [path.join(ROOT, 'bench', 'peers_trl.py'), jobFile, out], path.join(work, `trl-${seed}.log`), threadEnv);
        const r = JSON.parse(fs.readFileSync(out, 'utf8')) as TrlResult;
        versions = r.versions;
        runs.push({ side, round, steps: r.rounds, greedyPassAt1: r.heldOut.greedyPassAt1 });
      }
    }
  }

  // verl: the same config exported, read by verl's own code
  const exportDir = path.join(work, 'verl');
  cli(['export', 'verl', '--config', path.join(work, 'grpo-1.json'), '--out', exportDir, '--model', init]);
  const verlOut = path.join(work, 'verl.json');
  await runLogged(python, [path.join(ROOT, 'bench', 'peers_verl.py'), exportDir, verlOut], path.join(work, 'verl.log'));
  const verl = JSON.parse(fs.readFileSync(verlOut, 'utf8')) as { verl: string; checks: { name: string; ok: boolean; detail: string }[] };

  const report = describeRounds(runs, STEPS);
  const targets = peersTargets(report, verl.checks);
  console.log(
    [
      `${smoke ? 'SMOKE (tiny settings: a check of the bench, not a figure) — ' : ''}TRL ${String(versions.trl)} (transformers ${String(versions.transformers)}, PyTorch ${String(versions.torch)}) and the workbench, GRPO on npm start's calculator model and tasks`,
      `  ${config.groupsPerIteration} groups × ${config.groupSize} completions a step, ≤ ${config.policyOptions.maxNewTokens} new tokens, lr ${a.learningRate} (warm-up ${a.warmupSteps}), minibatch ${a.minibatchSize}, clip ${a.clipLow}/${a.clipHigh}, KL ${a.klCoef}, ${STEPS} steps, ${THREADS} thread, ${ROUNDS} interleaved rounds`,
      `  workbench: ${compute}`,
      ...report.lines,
      `verl ${verl.verl}: \`agent-rl export verl\` read by verl's own code, no GPU:`,
      ...verl.checks.map((c) => `  ${c.ok ? 'ok    ' : 'FAILED'} ${c.name}: ${c.detail.split('\n')[0]!.slice(0, 400)}`),
      ...targets.lines,
    ].join('\n'),
  );
  if (OUT) {
    fs.mkdirSync(OUT, { recursive: true });
    writeJson(path.join(OUT, 'peers.json'), {
      smoke,
      rounds: ROUNDS,
      steps: STEPS,
      threads: THREADS,
      compute,
      versions,
      config,
      runs,
      summary: report.summary,
    });
    fs.copyFileSync(verlOut, path.join(OUT, 'verl.json'));
  }
  fs.rmSync(work, { recursive: true, force: true });
  if (!targets.met) process.exitCode = 1;
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : String(e));
  process.exitCode = 1;
});
