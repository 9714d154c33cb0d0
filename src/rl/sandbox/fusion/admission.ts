// When `agent-rl sandbox serve` starts a queued request. Executions are not tied to the CPU count: a
// program that sleeps or waits holds a slot but no core, so slots are bounded by memory (`slots`, and
// free memory above a reserve), and the CPU is shared by measuring it: one execution per core starts
// whatever the load; beyond that a request starts only while the machine has fewer runnable threads
// than two per core (Linux's instantaneous count in /proc/loadavg, sampled every tick, counting the
// ones started since; elsewhere the CPU's busy share), so a sleeping program costs nothing once it
// sleeps, and CPU-bound programs each keep about half a core or more, so their wall-clock limit means
// what it says. Requests wait first in, first out; one that cannot start within `maxWaitMs` is
// answered 504 Gateway Timeout (which verl's SandboxFusion client retries, after 1 s and 2 s), as is
// one that finds `queueLimit` others waiting, so no request waits past its own time limits plus
// `maxWaitMs` and a backlog never holds the requests behind it.
import * as fs from 'node:fs';
import * as os from 'node:os';

export interface AdmissionOptions {
  /** Executions at once, at most (memory-bounded: see defaultSlots). */
  readonly slots: number;
  /** Requests waiting, at most; one more is turned away at once. */
  readonly queueLimit: number;
  /** The longest a request waits for a slot before it is turned away (ms). */
  readonly maxWaitMs: number;
  /** Cores: this many executions start whatever the CPU's load. */
  readonly cores: number;
  /** Free memory (bytes) below which nothing more starts. */
  readonly memoryReserveBytes: number;
  /** Sampling period of the CPU (ms). */
  readonly tickMs?: number;
  /** Test hooks: threads runnable now, in cores' worth (Linux: /proc/loadavg), and free memory. */
  readonly load?: () => number;
  readonly freeMemory?: () => number;
}

export type Admitted = { readonly ok: true; readonly waitedMs: number; release(): void } | { readonly ok: false; readonly reason: string };

export interface AdmissionStats {
  running: number;
  waiting: number;
  maxRunning: number;
  maxWaiting: number;
  started: number;
  turnedAway: number;
}

/** Slots by memory: half the machine's memory over what a sleeping sandboxed execution holds (≈ 40 MB, measured), within [cores, 1024]. */
export function defaultSlots(totalMemory = os.totalmem(), cores = os.availableParallelism()): number {
  return Math.max(cores, Math.min(1024, Math.floor(totalMemory / 2 / (40 * 1024 * 1024))));
}

/**
 * Threads runnable now, this process's reading thread excluded (Linux: /proc/loadavg's running
 * count); elsewhere the CPU's busy share since the last call, in cores.
 */
export function loadSampler(): () => number {
  try {
    fs.readFileSync('/proc/loadavg', 'utf8');
    return () => {
      const m = /^\S+ \S+ \S+ (\d+)\//.exec(fs.readFileSync('/proc/loadavg', 'utf8'));
      return m ? Math.max(0, Number(m[1]) - 1) : 0;
    };
  } catch {
    // no /proc: macOS, Windows
  }
  const totals = (): [number, number] => {
    let busy = 0;
    let all = 0;
    for (const c of os.cpus()) {
      const t = c.times;
      const sum = t.user + t.nice + t.sys + t.irq + t.idle;
      all += sum;
      busy += sum - t.idle;
    }
    return [busy, all];
  };
  let last = totals();
  const cores = os.cpus().length;
  return () => {
    const now = totals();
    const dAll = now[1] - last[1];
    const share = dAll > 0 ? (now[0] - last[0]) / dAll : 0;
    last = now;
    return Math.min(1, Math.max(0, share)) * cores;
  };
}

interface Waiter {
  readonly at: number;
  readonly resolve: (a: Admitted) => void;
  readonly timer: NodeJS.Timeout;
}

export class Admission {
  readonly stats: AdmissionStats = { running: 0, waiting: 0, maxRunning: 0, maxWaiting: 0, started: 0, turnedAway: 0 };
  private readonly queue: Waiter[] = [];
  private readonly sample: () => number;
  private readonly free: () => number;
  /** Runnable threads at the last tick, and executions started since. */
  private load = 0;
  private startedThisTick = 0;
  private ticker: NodeJS.Timeout | undefined;
  private readonly tickMs: number;

  constructor(private readonly o: AdmissionOptions) {
    this.sample = o.load ?? loadSampler();
    this.free = o.freeMemory ?? (() => os.freemem());
    this.tickMs = o.tickMs ?? 25;
  }

  /** Starts ticking while anything runs or waits (the timer never keeps the process alive). */
  private ensureTicker(): void {
    if (this.ticker) return;
    this.load = this.sample();
    this.ticker = setInterval(() => {
      this.load = this.sample();
      this.startedThisTick = 0;
      this.drain();
      if (this.stats.running === 0 && this.queue.length === 0) {
        clearInterval(this.ticker);
        this.ticker = undefined;
      }
    }, this.tickMs);
    this.ticker.unref();
  }

  /** May one more start now? */
  private canStart(): boolean {
    const s = this.stats;
    if (s.running >= this.o.slots) return false;
    if (s.running < this.o.cores) return true;
    if (this.free() < this.o.memoryReserveBytes) return false;
    // beyond a core each: only while fewer than two threads per core are runnable (those started
    // since the last sample counted as runnable: they are starting)
    return this.load + this.startedThisTick < this.o.cores * 2;
  }

  private start(at: number): Admitted {
    const s = this.stats;
    s.running += 1;
    s.started += 1;
    s.maxRunning = Math.max(s.maxRunning, s.running);
    this.startedThisTick += 1;
    this.ensureTicker();
    let released = false;
    return {
      ok: true,
      waitedMs: performance.now() - at,
      release: () => {
        if (released) return;
        released = true;
        s.running -= 1;
        this.drain();
      },
    };
  }

  private drain(): void {
    while (this.queue.length && this.canStart()) {
      const w = this.queue.shift()!;
      this.stats.waiting = this.queue.length;
      clearTimeout(w.timer);
      w.resolve(this.start(w.at));
    }
  }

  /** Waits for a slot; `ok: false` (answer 504) when the queue is full or the wait passes maxWaitMs. */
  acquire(): Promise<Admitted> {
    const at = performance.now();
    if (this.queue.length === 0 && this.canStart()) return Promise.resolve(this.start(at));
    if (this.queue.length >= this.o.queueLimit) {
      this.stats.turnedAway += 1;
      return Promise.resolve({ ok: false, reason: `queue full: ${this.queue.length} waiting, ${this.stats.running} running` });
    }
    this.ensureTicker();
    return new Promise<Admitted>((resolve) => {
      const timer = setTimeout(() => {
        const i = this.queue.indexOf(w);
        if (i >= 0) this.queue.splice(i, 1);
        this.stats.waiting = this.queue.length;
        this.stats.turnedAway += 1;
        resolve({
          ok: false,
          reason: `no execution slot within ${this.o.maxWaitMs} ms (${this.stats.running} running, ${this.queue.length} waiting; ${this.load.toFixed(0)} threads runnable on ${this.o.cores} cores)`,
        });
      }, this.o.maxWaitMs);
      const w: Waiter = { at, resolve, timer };
      this.queue.push(w);
      this.stats.waiting = this.queue.length;
      this.stats.maxWaiting = Math.max(this.stats.maxWaiting, this.queue.length);
    });
  }

  close(): void {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = undefined;
    for (const w of this.queue.splice(0)) {
      clearTimeout(w.timer);
      w.resolve({ ok: false, reason: 'the server is stopping' });
    }
  }
}
