// Resource limits of one execution, and the parts shared by the fresh and pooled executors: uid
// allocation, the process sweep, and the result record.
import * as fs from 'node:fs';
import { CODE_OPTION_SPECS } from '../../shared/runConfig';
import type { IsolationLevel } from './isolation';
import { isRoot } from './isolation';

export interface SandboxLimits {
  /** Wall-clock limit (ms); the whole process group is killed when it passes. */
  readonly timeoutMs: number;
  /** RLIMIT_CPU (s). */
  readonly cpuSeconds: number;
  /** RLIMIT_AS (bytes). */
  readonly memoryBytes: number;
  /** RLIMIT_NPROC: processes (threads included) the code may have at once. */
  readonly maxProcesses: number;
  /** RLIMIT_FSIZE (bytes): largest file the code may write. */
  readonly maxFileBytes: number;
  /** RLIMIT_NOFILE. */
  readonly maxOpenFiles: number;
  /** stdout + stderr bytes after which the code is killed. */
  readonly outputCapBytes: number;
  /** Bytes of each stream's tail kept for the observation. */
  readonly tailBytes: number;
}

/** The limits of an execution; the three a run config sets default to its code environment's table. */
export const DEFAULT_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  timeoutMs: CODE_OPTION_SPECS.timeoutMs.default,
  cpuSeconds: 10,
  memoryBytes: 512 * 1024 * 1024,
  maxProcesses: 32,
  maxFileBytes: 16 * 1024 * 1024,
  maxOpenFiles: 64,
  outputCapBytes: CODE_OPTION_SPECS.outputCapBytes.default,
  tailBytes: CODE_OPTION_SPECS.tailBytes.default,
});

/** The limits an environment's options set (timeoutMs, tailBytes, outputCapBytes), over the defaults. */
export function limitsOf(o: Pick<SandboxLimits, 'timeoutMs' | 'tailBytes' | 'outputCapBytes'>): SandboxLimits {
  return { ...DEFAULT_LIMITS, timeoutMs: o.timeoutMs, tailBytes: o.tailBytes, outputCapBytes: o.outputCapBytes };
}

/** What one execution produced. Tails only: the parent never holds more than `tailBytes` per stream. */
export interface ExecutionResult {
  readonly stdout: string;
  readonly stderr: string;
  /** null when killed by a signal. */
  readonly exitCode: number | null;
  readonly signal: number | string | null;
  readonly timedOut: boolean;
  readonly outputCapped: boolean;
  /** Total bytes the code wrote to stdout and stderr (up to the cap). */
  readonly outputBytes: number;
  readonly durationMs: number;
  readonly level: IsolationLevel;
  /** Set when the sandbox itself failed (not the code): the result is not the code's fault. */
  readonly sandboxError?: string;
  /** Files fetched from the work directory after the run (warm pool, when asked): path → base64. */
  readonly files?: Readonly<Record<string, string>>;
}

// Dedicated uids for sandboxed code when we run as root: distinct per process and per execution, far
// above the ranges distributions hand out, so a sweep by uid can only hit our own sandbox. 65,536 per
// process before one comes round again: the sandbox service starts at most a few hundred executions a
// second and none lasts past two minutes (compile + run at their longest), so a uid is never reused
// while an execution of it may live (with 4,096, a busy service reused them within one long request).
const UID_BASE = 3_000_000;
const UIDS_PER_PROCESS = 65_536;
let uidCounter = 0;
export function allocateUid(): number | undefined {
  if (!isRoot()) return undefined;
  uidCounter = (uidCounter + 1) % UIDS_PER_PROCESS;
  return UID_BASE + (process.pid % 4096) * UIDS_PER_PROCESS + uidCounter;
}

/** The real uid of every live process owned by `uid` (scan of /proc). */
export function pidsOfUid(uid: number): number[] {
  const pids: number[] = [];
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return pids;
  }
  for (const d of entries) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const status = fs.readFileSync(`/proc/${d}/status`, 'utf8');
      const m = /^Uid:\s+(\d+)/m.exec(status);
      if (m && Number(m[1]) === uid) pids.push(Number(d));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/** Kills a process group and every process of the sandbox uid until none is left (bounded). */
export async function sweep(pgid: number | undefined, uid: number | undefined): Promise<void> {
  if (pgid !== undefined) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  if (uid === undefined) return;
  for (let round = 0; round < 100; round++) {
    const left = pidsOfUid(uid);
    if (left.length === 0) return;
    for (const pid of left) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** RLIMIT_NPROC counts every process of the real uid: without our own uid, leave room for the user's others. */
export function nprocLimit(limits: SandboxLimits, uid: number | undefined): number {
  if (uid !== undefined) return limits.maxProcesses;
  const me = typeof process.getuid === 'function' ? process.getuid() : -1;
  return pidsOfUid(me).length + limits.maxProcesses;
}

/** The JSON config the Python side reads (apply_limits in python/common.py; `confine` at the landlock level, python/confine.py). */
export function pythonLimitConfig(limits: SandboxLimits, uid: number | undefined, level?: IsolationLevel): Record<string, number> {
  return {
    ...(level === 'landlock' ? { confine: 1 } : {}),
    cpu: limits.cpuSeconds,
    mem: limits.memoryBytes,
    nproc: nprocLimit(limits, uid),
    fsize: limits.maxFileBytes,
    nofile: limits.maxOpenFiles,
    ...(uid !== undefined ? { uid } : {}),
  };
}

/** Keeps the last `max` bytes of a stream. */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  constructor(private readonly max: number) {}
  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size - (this.chunks[0]?.length ?? 0) >= this.max && this.chunks.length > 1) {
      this.size -= this.chunks.shift()!.length;
    }
    if (this.size > this.max * 2) {
      const joined = Buffer.concat(this.chunks).subarray(this.size - this.max);
      this.chunks = [Buffer.from(joined)];
      this.size = joined.length;
    }
  }
  text(): string {
    const all = Buffer.concat(this.chunks);
    return all.subarray(Math.max(0, all.length - this.max)).toString('utf8');
  }
}
