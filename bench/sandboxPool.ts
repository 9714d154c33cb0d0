// Executions per second of a trivial program: warm pool vs one fresh interpreter per execution, both
// at the strongest isolation level available, same concurrency, interleaved rounds in one run.
// Target (issue 3): pool ≥ 5× fresh.
import * as os from 'node:os';
import { FreshExecutor, type Executor } from '../src/rl/sandbox/freshExecutor';
import { chooseLevel, resolvePython } from '../src/rl/sandbox/isolation';
import { DEFAULT_LIMITS } from '../src/rl/sandbox/limits';
import { WarmPool } from '../src/rl/sandbox/warmPool';

const CONCURRENCY = 2;

async function rate(ex: Executor, n: number): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) {
        next++;
        const r = await ex.execute('print(1)', DEFAULT_LIMITS);
        if (r.stdout !== '1\n') throw new Error(`unexpected output ${JSON.stringify(r)}`);
      }
    }),
  );
  return n / ((performance.now() - t0) / 1000);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const python = resolvePython();
  const level = chooseLevel('auto', python);
  const fresh = new FreshExecutor(level, python);
  const pool = new WarmPool(level, python, CONCURRENCY);
  await rate(pool, 4); // start the servers (their start-up is a one-off, not part of the rate)
  const freshRates: number[] = [];
  const poolRates: number[] = [];
  for (let round = 0; round < 5; round++) {
    freshRates.push(await rate(fresh, 30));
    poolRates.push(await rate(pool, 150));
  }
  await pool.close();
  const f = median(freshRates);
  const p = median(poolRates);
  console.log(`sandbox executions per second, level "${level}", concurrency ${CONCURRENCY}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}`);
  console.log(`  fresh interpreter per execution: ${f.toFixed(1)}/s  (rounds: ${freshRates.map((x) => x.toFixed(1)).join(', ')})`);
  console.log(`  warm pool (fork per execution):  ${p.toFixed(1)}/s  (rounds: ${poolRates.map((x) => x.toFixed(1)).join(', ')})`);
  console.log(`  ratio pool / fresh: ${(p / f).toFixed(2)}×  (target ≥ 5×: ${p / f >= 5 ? 'met' : 'NOT met'})`);
  if (p / f < 5) process.exitCode = 1;
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
