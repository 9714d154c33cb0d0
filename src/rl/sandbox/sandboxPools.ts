// The warm interpreter pools of one owner — a run's environment, the backend's re-runs — one per
// (level, interpreter, size), started on first use and closed together by their owner. Nothing here is
// process-wide: two runs in one process (tests, the CLI's env check) never close each other's pools.
import type { Executor } from './freshExecutor';
import { chooseLevel, resolvePython, type IsolationLevel } from './isolation';
import { WarmPool } from './warmPool';

export interface Sandbox {
  readonly executor: Executor;
  readonly level: IsolationLevel;
  readonly python: string;
}

/** What chooses a sandbox: the level asked for ('auto' = strongest available), the interpreter ('' = default), the pool's size. */
export interface SandboxChoice {
  readonly sandbox: IsolationLevel | 'auto';
  readonly python: string;
  readonly poolSize: number;
}

export class SandboxPools {
  private readonly pools = new Map<string, WarmPool>();
  private closed = false;

  /** Resolves the interpreter and the level (throwing an error that names the fix), then the pool (started on first use). */
  get(o: SandboxChoice): Sandbox {
    if (this.closed) throw new Error('sandbox pools: used after close()');
    const python = resolvePython(o.python || undefined);
    const level = chooseLevel(o.sandbox, python);
    const key = `${level}|${python}|${o.poolSize}`;
    let pool = this.pools.get(key);
    if (!pool) {
      pool = new WarmPool(level, python, o.poolSize);
      this.pools.set(key, pool);
    }
    return { executor: pool, level, python };
  }

  /** Closes every pool this owner started; safe to call twice. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(all.map((p) => p.close()));
  }
}
