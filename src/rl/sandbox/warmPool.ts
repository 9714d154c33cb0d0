// A pool of long-lived sandboxed interpreter servers (SERVER_PY) at one isolation level. Each execution
// is a fork inside a server instead of a new interpreter (and a new bwrap), with the same limits. A
// server that dies, answers garbage or stops answering is killed and replaced, and the execution is
// retried once on the fresh server; a second failure is reported as a sandbox error, never thrown.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { SCRUBBED_ENV, type Executor } from './freshExecutor';
import { wrapPython, type IsolationLevel } from './isolation';
import { allocateUid, pythonLimitConfig, sweep, type ExecutionResult, type SandboxLimits } from './limits';
import { SERVER_PY } from './pythonSources.generated';

/** Extra time the server gets beyond the code's own timeout before we declare it hung. */
const SERVER_GRACE_MS = 3000;
const START_TIMEOUT_MS = 15_000;

export type ServerProcess = ChildProcessByStdio<Writable, Readable, Readable>;

/**
 * A long-lived sandboxed Python server (`python -c SOURCE ARGS…` at `level`), in its own process group,
 * talking JSON lines over its pipes. Idle servers never keep this process alive (a pending request's
 * guard timer does).
 */
export function spawnServer(level: IsolationLevel, python: string, source: string, args: readonly string[], workDir?: string): ServerProcess {
  const argv = wrapPython(level, ['-c', source, ...args], { python, ...(workDir ? { workDir } : {}) });
  const child = spawn(argv[0]!, argv.slice(1), { env: { ...SCRUBBED_ENV }, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  child.unref();
  for (const s of [child.stdin, child.stdout, child.stderr]) (s as unknown as { unref?: () => void }).unref?.();
  return child;
}

/** Kills a server's whole process group (safe when it is gone). */
export function killServer(child: ServerProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // gone
  }
}

interface Pending {
  resolve: (line: Record<string, unknown>) => void;
  reject: (e: Error) => void;
}

class Server {
  readonly child: ServerProcess;
  private pending: Pending | undefined;
  private dead: Error | undefined;
  readonly ready: Promise<void>;
  private stderrTail = '';
  private rejectReady: ((e: Error) => void) | undefined;

  constructor(
    level: IsolationLevel,
    python: string,
    readonly baseDir: string | undefined,
  ) {
    this.child = spawnServer(level, python, SERVER_PY, [level === 'strict' ? '/work' : baseDir!], baseDir);
    this.child.stderr.on('data', (d: Buffer) => {
      this.stderrTail = (this.stderrTail + d.toString()).slice(-2000);
    });
    const lines = readline.createInterface({ input: this.child.stdout });
    let onReady: (() => void) | undefined;
    this.ready = new Promise<void>((resolve, reject) => {
      onReady = resolve;
      this.rejectReady = reject;
    });
    const timer = setTimeout(() => this.fail(new Error(`sandbox server did not start within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    lines.on('line', (line) => {
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(line) as Record<string, unknown>;
      } catch {
        this.fail(new Error(`sandbox server wrote a line that is not JSON: ${line.slice(0, 200)}`));
        return;
      }
      if (msg.ready === true) {
        clearTimeout(timer);
        onReady?.();
        return;
      }
      const p = this.pending;
      this.pending = undefined;
      p?.resolve(msg);
    });
    this.child.on('error', (e) => this.fail(e));
    this.child.on('exit', (code, signal) => {
      clearTimeout(timer);
      this.fail(new Error(`sandbox server exited (code ${code}, signal ${signal})${this.stderrTail ? `: ${this.stderrTail.trim().split('\n').pop()}` : ''}`));
    });
    this.ready.catch(() => undefined);
  }

  get alive(): boolean {
    return this.dead === undefined;
  }

  private fail(e: Error): void {
    if (this.dead) return;
    this.dead = e;
    this.rejectReady?.(e);
    const p = this.pending;
    this.pending = undefined;
    p?.reject(e);
    this.kill();
  }

  kill(): void {
    killServer(this.child);
  }

  request(req: Record<string, unknown>, guardMs: number): Promise<Record<string, unknown>> {
    if (this.dead) return Promise.reject(this.dead);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.fail(new Error(`sandbox server did not answer within ${guardMs} ms`)), guardMs);
      this.pending = {
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      this.child.stdin.write(`${JSON.stringify(req)}\n`, (err) => {
        if (err) this.fail(err);
      });
    });
  }
}

export interface ExecutionIo {
  /** The code's standard input. */
  readonly stdin?: string;
  /** Files to put in the work directory first: relative path → base64 content. */
  readonly files?: Readonly<Record<string, string>>;
  /** Files to return after the run (relative paths; regular files only, never through a symlink). */
  readonly fetchFiles?: readonly string[];
}

export interface PoolStats {
  /** Servers started over the pool's life (size + replacements). */
  started: number;
  replaced: number;
  executions: number;
}

export class WarmPool implements Executor {
  /** Idle servers, most recently used last, each with when it went idle. */
  private readonly idle: Server[] = [];
  private readonly idleSince = new Map<Server, number>();
  private trimmer: NodeJS.Timeout | undefined;
  private readonly waiters: ((s: Server) => void)[] = [];
  private readonly all = new Set<Server>();
  private nextId = 0;
  private closed = false;
  readonly stats: PoolStats = { started: 0, replaced: 0, executions: 0 };

  /**
   * `size` servers at most; above `keep` of them, a server idle for `idleMs` is stopped, so a burst
   * (the HTTP service's hundreds of sleeping programs) does not hold its servers' memory afterwards.
   */
  constructor(
    readonly level: IsolationLevel,
    readonly python: string,
    private readonly size = 2,
    private readonly keep = size,
    private readonly idleMs = 10_000,
  ) {}

  private async startServer(): Promise<Server> {
    let baseDir: string | undefined;
    if (this.level !== 'strict') {
      baseDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-pool-'));
      fs.chmodSync(baseDir, 0o711);
    }
    const s = new Server(this.level, this.python, baseDir);
    this.all.add(s);
    this.stats.started += 1;
    try {
      await s.ready;
    } catch (e) {
      this.discard(s);
      throw e;
    }
    return s;
  }

  private discard(s: Server): void {
    s.kill();
    this.all.delete(s);
    if (s.baseDir) fs.rmSync(s.baseDir, { recursive: true, force: true });
  }

  private async acquire(): Promise<Server> {
    const s = this.idle.pop();
    if (s) {
      this.idleSince.delete(s);
      return s;
    }
    if (this.all.size < this.size) return this.startServer();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private release(s: Server): void {
    if (!s.alive || this.closed) {
      this.discard(s);
      return;
    }
    const w = this.waiters.shift();
    if (w) w(s);
    else {
      this.idle.push(s);
      this.idleSince.set(s, performance.now());
      if (this.all.size > this.keep) this.scheduleTrim();
    }
  }

  /** Stops servers idle for idleMs while more than `keep` are alive (least recently used first). */
  private scheduleTrim(): void {
    if (this.trimmer) return;
    this.trimmer = setTimeout(() => {
      this.trimmer = undefined;
      const now = performance.now();
      while (this.all.size > this.keep && this.idle.length && now - this.idleSince.get(this.idle[0]!)! >= this.idleMs) {
        const s = this.idle.shift()!;
        this.idleSince.delete(s);
        this.discard(s);
      }
      if (this.all.size > this.keep && this.idle.length) this.scheduleTrim();
    }, this.idleMs / 2);
    this.trimmer.unref();
  }

  /** Starts servers until `n` are alive (at most `size`), a few at a time; resolves when they are ready. */
  async prestart(n: number, batch = 8): Promise<void> {
    const target = Math.min(n, this.size);
    while (this.all.size < target && !this.closed) {
      const started = await Promise.allSettled(Array.from({ length: Math.min(batch, target - this.all.size) }, () => this.startServer()));
      // the ones that started serve; a failure (already discarded) ends the warming with its reason
      for (const s of started) if (s.status === 'fulfilled') this.release(s.value);
      const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
      if (failed) throw failed.reason;
    }
  }

  /** Servers alive now. */
  get servers(): number {
    return this.all.size;
  }

  /** `io`: what the HTTP sandbox service (SandboxFusion's API) passes beyond the code. */
  async execute(code: string, limits: SandboxLimits, io: ExecutionIo = {}): Promise<ExecutionResult> {
    if (this.closed) throw new Error('WarmPool: execute() after close()');
    this.stats.executions += 1;
    let lastError: Error | undefined;
    for (let attempt = 0; attempt < 2; attempt++) {
      const uid = allocateUid();
      let server: Server;
      try {
        server = await this.acquire();
      } catch (e) {
        lastError = e as Error;
        continue;
      }
      const req = {
        id: ++this.nextId,
        code,
        cfg: pythonLimitConfig(limits, uid, this.level),
        timeoutMs: limits.timeoutMs,
        outputCap: limits.outputCapBytes,
        tailBytes: limits.tailBytes,
        ...(io.stdin !== undefined ? { stdin: io.stdin } : {}),
        ...(io.files ? { files: io.files } : {}),
        ...(io.fetchFiles?.length ? { fetch: io.fetchFiles } : {}),
      };
      try {
        const res = await server.request(req, limits.timeoutMs + SERVER_GRACE_MS);
        if (typeof res.error === 'string') throw new Error(`sandbox server failed: ${res.error}`);
        this.release(server);
        return {
          stdout: typeof res.stdout === 'string' ? res.stdout : '',
          stderr: typeof res.stderr === 'string' ? res.stderr : '',
          exitCode: (res.exitCode as number | null) ?? null,
          signal: (res.signal as number | null) ?? null,
          timedOut: res.timedOut === true,
          outputCapped: res.outputCapped === true,
          outputBytes: Math.min(Number(res.outputBytes ?? 0), limits.outputCapBytes),
          durationMs: Number(res.durationMs ?? 0),
          level: this.level,
          ...(typeof res.files === 'object' && res.files !== null ? { files: res.files as Record<string, string> } : {}),
        };
      } catch (e) {
        lastError = e as Error;
        // The server is suspect: kill it (and anything of this execution's uid) and let a fresh one retry.
        this.discard(server);
        this.stats.replaced += 1;
        await sweep(undefined, uid);
        const w = this.waiters.shift();
        if (w) void this.startServer().then(w, () => this.waiters.unshift(w));
      }
    }
    return {
      stdout: '',
      stderr: '',
      exitCode: null,
      signal: null,
      timedOut: false,
      outputCapped: false,
      outputBytes: 0,
      durationMs: 0,
      level: this.level,
      sandboxError: lastError?.message ?? 'sandbox failed',
    };
  }

  /** Kills every server; safe to call twice. */
  close(): Promise<void> {
    this.closed = true;
    if (this.trimmer) clearTimeout(this.trimmer);
    for (const s of [...this.all]) this.discard(s);
    this.idle.length = 0;
    return Promise.resolve();
  }

  /** Test hook: the OS pids of live servers (to kill one and watch it be replaced). */
  serverPids(): number[] {
    return [...this.all].filter((s) => s.alive).map((s) => s.child.pid!);
  }
}
