// Are the Runs tree's queries still fast with 100,000 stored trajectories? Builds two databases in
// the same run — 1,000 and 100,000 trajectories (three turns each) — and times the backend's handlers
// the tree and the dashboard call, as medians. Target (issue 5): the large store within 3× of the
// small one for every query (they go through indexes, so their cost should not grow with the store).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { handlers } from '../src/backend/handlers';
import { SandboxPools } from '../src/rl/sandbox/sandboxPools';
import { validateRunConfig } from '../src/shared/runConfig';
import type { IterationMetrics, Trajectory } from '../src/shared/types';
import { openStore } from '../src/store/openStore';
import { RunWriter } from '../src/store/runWriter';

const PER_ITERATION = 32; // 100,000 = 3,125 iterations of 32

function build(file: string, trajectories: number): void {
  const db = openStore(file);
  const w = new RunWriter(db);
  const iterations = trajectories / PER_ITERATION;
  w.begin(validateRunConfig({ iterations }), { compute: 'bench' });
  for (let it = 1; it <= iterations; it++) {
    const trajs: Trajectory[] = Array.from({ length: PER_ITERATION }, (_, i) => ({
      taskId: 'binary-search-repair',
      group: Math.floor(i / 8),
      indexInGroup: i % 8,
      termination: 'finished',
      policyVersion: it,
      advantage: 0.5,
      outcome: { reward: i % 2, success: i % 2 === 1, publicPass: true, privatePass: i % 2 === 1 },
      turns: [0, 1, 2].map((k) => ({
        index: k,
        actionText: 'fix_low',
        action: { kind: 'tool' as const, name: 'fix_low', args: {} },
        observation: { text: 'low = mid + 1', data: { steps: k } },
        policy: { behaviourLogprob: -1.7, policyVersion: it },
      })),
    }));
    const metrics = {
      iteration: it,
      rewardMean: 0.5,
      rewardMax: 1,
      rewardMin: 0,
      successRate: 0.5,
      publicPassRate: 1,
      privatePassRate: 0.5,
      meanTurns: 3,
      zeroVarianceGroups: 0,
      trajectories: PER_ITERATION,
      loss: 0,
      policyLoss: 0,
      kl: 0,
      clipFraction: 0,
      entropy: 1,
      gradNorm: 0,
      ratioMin: 1,
      ratioMax: 1,
      updated: 1,
      trainedTrajectories: PER_ITERATION,
      policyVersion: it,
      wallMs: 1,
    } satisfies IterationMetrics;
    w.iteration({ metrics, trajectories: trajs });
  }
  w.end('completed', { wallMs: 1 });
  db.close();
}

function median(f: () => unknown, n = 40): number {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    f();
    times.push(performance.now() - t);
  }
  return times.sort((a, b) => a - b)[Math.floor(n / 2)]!;
}

function main(): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-bench-tree-'));
  const sizes = [1_024, 100_000]; // whole iterations of 32
  const results = sizes.map((n) => {
    const file = path.join(dir, `runs-${n}.sqlite`);
    const t0 = performance.now();
    build(file, n);
    const buildMs = performance.now() - t0;
    const h = handlers(openStore(file), new SandboxPools());
    const iterations = n / PER_ITERATION;
    const mid = Math.ceil(iterations / 2);
    const firstTraj = h.trajectories({ runId: 1, iteration: mid, offset: 0, limit: 100 }) as { items: { id: number }[] };
    return {
      n,
      buildMs,
      listRuns: median(() => h.listRuns({})),
      iterationsFirstPage: median(() => h.iterations({ runId: 1, offset: 0, limit: 100 })),
      iterationsLastPage: median(() => h.iterations({ runId: 1, offset: Math.max(0, iterations - 100), limit: 100 })),
      groupPage: median(() => h.trajectories({ runId: 1, iteration: mid, offset: 0, limit: 1000 })),
      trajectory: median(() => h.trajectory({ trajectoryId: firstTraj.items[0]!.id })),
    };
  });
  const [small, large] = results as [(typeof results)[0], (typeof results)[0]];
  console.log(
    `Runs-tree queries, medians of 40 calls (ms); stores of ${small.n.toLocaleString('en')} and ${large.n.toLocaleString('en')} trajectories (3 turns each)`,
  );
  let worst = 0;
  for (const key of ['listRuns', 'iterationsFirstPage', 'iterationsLastPage', 'groupPage', 'trajectory'] as const) {
    const ratio = large[key] / Math.max(small[key], 1e-3);
    worst = Math.max(worst, ratio);
    console.log(`  ${key.padEnd(20)} ${small[key].toFixed(3).padStart(8)}  ${large[key].toFixed(3).padStart(8)}   ratio ${ratio.toFixed(2)}×`);
  }
  console.log(`  building the 100,000-trajectory store: ${(large.buildMs / 1000).toFixed(1)} s`);
  console.log(`  worst ratio ${worst.toFixed(2)}× (target ≤ 3×: ${worst <= 3 ? 'met' : 'NOT met'})`);
  fs.rmSync(dir, { recursive: true, force: true });
  if (worst > 3) process.exitCode = 1;
}

try {
  main();
} catch (e) {
  console.error(e);
  process.exit(1);
}
