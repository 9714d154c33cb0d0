// One episode's tools: a session forked from the sandbox's warm tool zygote (TOOL_ZYGOTE_PY) on the
// episode's first call, ended when the episode closes. A call that passes its time limit, output that
// passes the cap, a crash or a line that is not JSON ends the session; the call comes back as an
// error the model reads, and the next call forks a fresh session (its state lost, which that
// observation says).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import type { IsolationLevel } from '../../sandbox/isolation';
import { allocateUid, pythonLimitConfig, type SandboxLimits } from '../../sandbox/limits';
import { killServer, spawnServer, type ServerProcess } from '../../sandbox/warmPool';
import { TOOL_ZYGOTE_PY } from './toolZygotePy.generated';

/** A tool as the tool file declares it: the JSON schema of its parameters, derived from the signature. */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly parameters: { readonly type: 'object'; readonly properties: Record<string, unknown>; readonly required: readonly string[] };
  /** `convert(value: number, unit: string = "m")`: what the prompt shows. */
  readonly signature: string;
}

export interface ToolFile {
  /** The file's path as the user wrote it (for errors and tracebacks). */
  readonly name: string;
  readonly source: string;
}

/** What one call came back with. kind: unknown_tool, bad_args, raised, output_cap, timeout, crashed (errors) or code (an exec). */
export interface ToolReply {
  readonly ok: boolean;
  readonly kind?: string;
  readonly result?: string;
  readonly printed?: string;
  readonly error?: string;
  readonly exit?: number;
  /** The Python type of a call's return value (its text is JSON unless the type is str). */
  readonly type?: string;
  readonly durationMs: number;
}

export type ToolRequest =
  | {
      readonly op: 'call';
      readonly name: string;
      readonly args?: readonly unknown[];
      readonly kwargs?: Readonly<Record<string, unknown>>;
      readonly whole?: boolean;
    }
  | { readonly op: 'call_text'; readonly name: string; readonly text: string }
  | { readonly op: 'exec'; readonly code: string };

export interface SessionSandbox {
  readonly level: IsolationLevel;
  readonly python: string;
  readonly limits: SandboxLimits;
  /** Sessions of different roles (the agent's tools, the reward) never share a zygote. */
  readonly role?: 'tools' | 'reward';
  /** The zygotes the session forks from: its owner's (a run's environment, a check), closed by that owner. */
  readonly zygotes: ToolZygotes;
}

export class ToolLoadError extends Error {
  readonly exitCode = 2; // bad input, not a failure while running: agent-rl exits 2 (src/cli/exitCodes.ts)
  /** `sandbox`: the sandbox failed before the file could be tried (not the file's fault). */
  constructor(file: string, detail: string, sandbox = false) {
    super(
      sandbox
        ? `${file}: the tool sandbox failed before the file could be imported: ${detail}. Fix: check \`agent-rl env check\` (the interpreter and the isolation level), then run again`
        : `${file}: the tool file does not import: ${detail}. Fix: correct the file (\`agent-rl env check --config FILE\` shows its tools without training)`,
    );
    this.name = 'ToolLoadError';
  }
}

const START_TIMEOUT_MS = 15_000;
/** How much longer than a call's own limit the host waits for the zygote before it gives the session up. */
const ZYGOTE_GRACE_MS = 30_000;

type Listener = (m: Record<string, unknown> | Error) => void;

/**
 * The zygote (TOOL_ZYGOTE_PY) of one (level, interpreter, limits): started once, in one sandbox, shared
 * by every episode's session; restarted on the next session when it dies.
 */
class ToolZygote {
  private readonly child: ServerProcess;
  private readonly hostDir: string | undefined;
  private readonly listeners = new Map<number, Listener>();
  private dead: Error | undefined;
  private stderrTail = '';
  readonly ready: Promise<void>;
  /** rlimits and the uid of a session: the uid (when root) per session, the rest computed once. */
  private readonly baseCfg: Record<string, number>;

  constructor(readonly sandbox: SessionSandbox) {
    const strict = sandbox.level === 'strict';
    if (!strict) {
      this.hostDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-tools-'));
      fs.chmodSync(this.hostDir, 0o711);
    }
    this.baseCfg = {
      ...pythonLimitConfig(sandbox.limits, undefined, sandbox.level),
      cap: sandbox.limits.outputCapBytes,
      resultBytes: sandbox.limits.tailBytes,
    };
    this.child = spawnServer(sandbox.level, sandbox.python, TOOL_ZYGOTE_PY, [strict ? '/work' : this.hostDir!], this.hostDir);
    this.child.stdin.on('error', () => undefined);
    this.child.stderr.on('data', (d: Buffer) => {
      this.stderrTail = (this.stderrTail + d.toString()).slice(-2000);
    });
    let onReady: (() => void) | undefined;
    this.ready = new Promise<void>((resolve, reject) => {
      onReady = resolve;
      this.failReady = reject;
    });
    this.ready.catch(() => undefined);
    const timer = setTimeout(() => this.fail(new Error(`crashed: the tool sandbox did not start within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    readline.createInterface({ input: this.child.stdout }).on('line', (line) => {
      const tab = line.indexOf('\t');
      if (tab < 0) {
        if (line.startsWith('{"ready"')) {
          clearTimeout(timer);
          onReady?.();
        } else this.fail(new Error(`crashed: the tool sandbox wrote an unexpected line: ${line.slice(0, 200)}`));
        return;
      }
      const sid = Number(line.slice(0, tab));
      const listener = this.listeners.get(sid);
      if (!listener) return;
      let msg: unknown;
      try {
        msg = JSON.parse(line.slice(tab + 1));
      } catch {
        listener(new Error(`crashed: the tool process wrote a line that is not JSON: ${line.slice(tab + 1, tab + 201)}`));
        return;
      }
      if (typeof msg !== 'object' || msg === null) listener(new Error('crashed: the tool process answered garbage'));
      else if (typeof (msg as { dead?: unknown }).dead === 'string') listener(new Error((msg as { dead: string }).dead));
      else listener(msg as Record<string, unknown>);
    });
    this.child.on('error', (e) => this.fail(e));
    this.child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const why = this.stderrTail.trim().split('\n').pop();
      this.fail(new Error(`crashed: the tool sandbox exited (code ${code}, signal ${signal})${why ? `: ${why}` : ''}`));
    });
  }

  private failReady: (e: Error) => void = () => undefined;

  get alive(): boolean {
    return this.dead === undefined;
  }

  private fail(e: Error): void {
    if (this.dead) return;
    this.dead = e;
    this.failReady(e);
    for (const l of this.listeners.values()) l(e);
    this.listeners.clear();
    this.kill();
  }

  private send(msg: Record<string, unknown>): void {
    if (!this.dead) this.child.stdin.write(`${JSON.stringify(msg)}\n`);
  }

  /** Forks session `sid`, which imports `file`; its answers (the import's first) and its death go to `listener`. */
  open(sid: number, file: ToolFile, listing: boolean, listener: Listener): void {
    if (this.dead) {
      listener(this.dead);
      return;
    }
    this.listeners.set(sid, listener);
    const uid = allocateUid();
    const cfg = {
      ...this.baseCfg,
      loadTimeoutMs: START_TIMEOUT_MS + this.sandbox.limits.timeoutMs,
      ...(uid !== undefined ? { uid, nproc: this.sandbox.limits.maxProcesses } : {}),
    };
    this.send({ op: 'open', sid, cfg, load: { source: file.source, filename: file.name, listing } });
  }

  /** `timeoutMs`: the zygote kills the session when the call has not answered that long after it reached it. */
  request(sid: number, body: unknown, timeoutMs: number): void {
    // as text: the zygote forwards it without parsing what the model wrote
    this.send({ op: 'req', sid, body: JSON.stringify(body), timeoutMs });
  }

  /** Ends session `sid` (its processes are killed, its folder removed). */
  close(sid: number): void {
    this.listeners.delete(sid);
    this.send({ op: 'close', sid });
  }

  kill(): void {
    killServer(this.child);
    removeDir(this.hostDir);
  }

  /** Ends the zygote: its stdin closes, so it ends every session (their groups, orphans, uids) and exits; killed if it has not within a second. */
  shutdown(): void {
    this.dead ??= new Error('crashed: the tool sandbox was shut down');
    this.child.stdin.end();
    const t = setTimeout(() => this.kill(), 1000);
    t.unref();
    this.child.once('exit', () => {
      clearTimeout(t);
      removeDir(this.hostDir);
    });
  }
}

/** Removes a work folder a session may have locked itself out of (never throws: a leftover is not worth a crash). */
function removeDir(dir: string | undefined): void {
  if (!dir) return;
  try {
    fs.rmSync(dir, { recursive: true, force: true });
  } catch {
    try {
      for (const f of fs.readdirSync(dir, { recursive: true }) as string[]) fs.chmodSync(path.join(dir, f), 0o700);
      fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // left for the OS's temporary-file cleanup
    }
  }
}

/**
 * The tool zygotes of one owner (a run's environment, an env check): one per sandbox and role, a dead
 * one replaced when the next session opens; close() kills them all and nothing of any other owner.
 */
export class ToolZygotes {
  private readonly zygotes = new Map<string, ToolZygote>();

  async get(sandbox: SessionSandbox): Promise<ToolZygote> {
    const key = JSON.stringify([sandbox.role ?? 'tools', sandbox.level, sandbox.python, sandbox.limits]);
    let z = this.zygotes.get(key);
    if (!z || !z.alive) {
      z = new ToolZygote(sandbox);
      this.zygotes.set(key, z);
    }
    await z.ready;
    return z;
  }

  /** Kills every zygote of this owner (the end of a run). */
  close(): void {
    for (const z of this.zygotes.values()) z.shutdown();
    this.zygotes.clear();
  }
}

let nextSid = 0;

/** A live session in a zygote. Use ToolSession, which replaces it after a failure. */
class ToolProcess {
  private readonly sid = ++nextSid;
  private pending: Listener | undefined;
  private dead: Error | undefined;
  private zygote: ToolZygote | undefined;
  /** The session's first line: its file imported, or why not (an Error when the session died first). */
  readonly loaded: Promise<Record<string, unknown> | Error>;

  constructor(sandbox: SessionSandbox, file: ToolFile, listing: boolean) {
    this.loaded = new Promise((resolveLoaded) => {
      this.pending = resolveLoaded;
      sandbox.zygotes.get(sandbox).then(
        (z) => {
          this.zygote = z;
          if (this.closed) return; // closed while the zygote started: never opened
          z.open(this.sid, file, listing, (m) => {
            if (m instanceof Error) this.fail(m);
            else {
              const p = this.pending;
              this.pending = undefined;
              p?.(m);
            }
          });
        },
        (e: unknown) => this.fail(e instanceof Error ? e : new Error(String(e))),
      );
    });
  }

  get alive(): boolean {
    return this.dead === undefined;
  }

  /** Ends the session with `e` (what its pending request, if any, resolves with). */
  abort(e: Error): void {
    this.fail(e);
  }

  private fail(e: Error): void {
    if (this.dead) return;
    this.dead = e;
    const p = this.pending;
    this.pending = undefined;
    p?.(e);
    this.kill();
  }

  kill(): void {
    this.closed = true;
    this.zygote?.close(this.sid);
  }

  private closed = false;

  /** Sends one request; resolves with the answer or an Error (the session is then dead). */
  async request(req: ToolRequest | Record<string, unknown>, timeoutMs: number): Promise<Record<string, unknown> | Error> {
    await this.loaded;
    if (this.dead) return this.dead;
    return new Promise((resolve) => {
      // the zygote times the call itself (from when it reached the session); this guards a zygote that stopped answering
      const guard = timeoutMs + ZYGOTE_GRACE_MS;
      const timer = setTimeout(() => this.fail(new Error(`timeout: the tool sandbox did not answer within ${guard} ms`)), guard);
      this.pending = (m) => {
        clearTimeout(timer);
        resolve(m);
      };
      this.zygote!.request(this.sid, req, timeoutMs);
    });
  }
}

/** Splits "kind: text" from a process failure. */
function failure(e: Error, durationMs: number): ToolReply {
  const m = /^(timeout|output_cap|crashed): ([\s\S]*)$/.exec(e.message);
  return { ok: false, kind: m ? m[1]! : 'crashed', error: m ? m[2]! : e.message, durationMs };
}

export interface LoadedTools {
  readonly tools: readonly ToolSpec[];
  /** The file's EXAMPLES: tool name → keyword arguments, when it gives them. */
  readonly examples: Readonly<Record<string, unknown>>;
}

/** The tools of one episode, in one process that is restarted after a failure. */
export class ToolSession {
  private proc: ToolProcess | undefined;
  private loading: Promise<LoadedTools> | undefined;
  private restarts = 0;
  private closed = false;

  /** `listing`: the session reports the tools' schemas (for prepare and env check; episodes need none). */
  constructor(
    private readonly sandbox: SessionSandbox,
    private readonly file: ToolFile | undefined,
    private readonly listing = false,
  ) {}

  /** Forks the session, which imports the tool file; throws ToolLoadError when it does not import. */
  start(): Promise<LoadedTools> {
    if (this.closed) return Promise.reject(new Error('ToolSession: start() after close()'));
    if (this.loading && this.proc?.alive) return this.loading;
    const file = this.file ?? { name: 'tools.py', source: '' };
    const proc = new ToolProcess(this.sandbox, file, this.listing);
    this.proc = proc;
    const guard = START_TIMEOUT_MS + this.sandbox.limits.timeoutMs + ZYGOTE_GRACE_MS;
    const timer = setTimeout(() => proc.abort(new Error(`timeout: the tool sandbox did not answer within ${guard} ms`)), guard);
    this.loading = proc.loaded.then((m) => {
      clearTimeout(timer);
      if (m instanceof Error) throw new ToolLoadError(file.name, m.message.replace(/^\w+: /, ''), true);
      if (m.ok !== true) throw new ToolLoadError(file.name, typeof m.error === 'string' ? m.error : 'unknown error');
      return {
        tools: (m.tools ?? []) as ToolSpec[],
        examples: (typeof m.examples === 'object' && m.examples !== null ? m.examples : {}) as Record<string, unknown>,
      };
    });
    this.loading.catch(() => undefined);
    return this.loading;
  }

  /** Runs one request. Never throws for the tool's own failures: they come back as error replies. */
  async call(req: ToolRequest): Promise<ToolReply> {
    const t0 = performance.now();
    const restarted = this.proc !== undefined && !this.proc.alive;
    if (restarted) this.restarts += 1;
    await this.start();
    const m = await this.proc!.request(req, this.sandbox.limits.timeoutMs);
    const durationMs = performance.now() - t0;
    if (m instanceof Error) {
      const f = failure(m, durationMs);
      return { ...f, error: `${f.error}; the tool process was stopped, and the next call starts a fresh one (its state is lost)` };
    }
    // the session cuts its fields itself; code that wrote to the reply channel directly is cut here
    const clip = (s: string, max: number): string => (s.length <= max ? s : `${s.slice(0, max)}... [cut: ${s.length} characters in all]`);
    const short = this.sandbox.limits.tailBytes;
    const reply: ToolReply = {
      ok: m.ok === true,
      durationMs,
      ...(typeof m.kind === 'string' ? { kind: m.kind.slice(0, 40) } : {}),
      ...(typeof m.result === 'string' ? { result: clip(m.result, 'whole' in req && req.whole === true ? this.sandbox.limits.outputCapBytes : short) } : {}),
      ...(typeof m.printed === 'string' ? { printed: clip(m.printed, short) } : {}),
      ...(typeof m.error === 'string' ? { error: clip(m.error, short) } : {}),
      ...(typeof m.exit === 'number' ? { exit: m.exit } : {}),
      ...(typeof m.type === 'string' ? { type: m.type } : {}),
    };
    return restarted ? { ...reply, printed: `[the tool process was restarted after a failure: earlier state is lost]\n${reply.printed ?? ''}` } : reply;
  }

  /** Processes started after the first (after timeouts, floods, crashes). */
  get restartCount(): number {
    return this.restarts;
  }

  close(): void {
    this.closed = true;
    this.proc?.kill();
    this.proc = undefined;
  }
}

/** A few long-lived sessions of one file shared by many callers, one request each at a time (the reward). */
export class SessionPool {
  private readonly idle: ToolSession[] = [];
  private readonly waiters: ((s: ToolSession) => void)[] = [];
  private readonly all = new Set<ToolSession>();
  private readonly calls = new Map<ToolSession, number>();
  private closed = false;

  /** `recycleAfter`: a session is replaced after this many calls (its CPU-time limit counts from its fork). */
  constructor(
    private readonly sandbox: SessionSandbox,
    private readonly file: ToolFile,
    private readonly size: number,
    private readonly recycleAfter = 200,
  ) {}

  async call(req: ToolRequest): Promise<ToolReply> {
    if (this.closed) throw new Error('SessionPool: call() after close()');
    let s = this.idle.pop();
    if (!s && this.all.size < this.size) {
      s = new ToolSession(this.sandbox, this.file);
      this.all.add(s);
    }
    s ??= await new Promise<ToolSession>((r) => this.waiters.push(r));
    try {
      return await s.call(req);
    } finally {
      const n = (this.calls.get(s) ?? 0) + 1;
      let next = s;
      if (n >= this.recycleAfter || this.closed) {
        s.close();
        this.all.delete(s);
        this.calls.delete(s);
        next = new ToolSession(this.sandbox, this.file);
        if (!this.closed) this.all.add(next);
      } else this.calls.set(s, n);
      if (this.closed) next.close();
      else {
        const w = this.waiters.shift();
        if (w) w(next);
        else this.idle.push(next);
      }
    }
  }

  close(): void {
    this.closed = true;
    for (const s of this.all) s.close();
    this.all.clear();
    this.idle.length = 0;
  }
}
