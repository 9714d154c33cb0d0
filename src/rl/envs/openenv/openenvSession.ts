// One episode's session with an OpenEnv server (openenv-core 0.3.0, its HTTPEnvServer): a WebSocket at
// <url>/ws whose server side holds one environment of its own until the socket closes — HTTP /reset and
// /step build a fresh environment per request, so a multi-step episode needs the socket. Its protocol,
// as openenv/core/env_server/http_server.py and types.py have it, one request in flight at a time:
//   → {"type": "reset", "data": {"seed": 3, "episode_id": "…", …reset kwargs}}
//   ← {"type": "observation", "data": {"observation": {…fields}, "reward": number | null, "done": bool}}
//   → {"type": "step", "data": {…the action's fields}}             ← the same observation answer
//   → {"type": "state"}                                             ← {"type": "state", "data": {episode_id, step_count, …}}
//   → {"type": "close"}                                             (the server ends the session)
//   ← {"type": "error", "data": {"message", "code": INVALID_JSON | VALIDATION_ERROR | EXECUTION_ERROR |
//      CAPACITY_REACHED | FACTORY_ERROR | SESSION_ERROR | …, "errors"?: pydantic's [{loc, msg}]}}
// Every failure is an OpenEnvError naming the server's URL, the request and the field or the fix.

export class OpenEnvError extends Error {
  override name = 'OpenEnvError';
  /** A server that cannot be reached or answers out of protocol is bad input: agent-rl exits 2 (src/cli/exitCodes.ts). */
  readonly exitCode = 2;
  constructor(
    message: string,
    /** The server's error code (WSErrorCode: CAPACITY_REACHED, VALIDATION_ERROR, …), where it sent one. */
    readonly code?: string,
  ) {
    super(message);
  }
}

/** A reset's or a step's answer: the observation's own fields (done, reward and metadata apart), its reward and done. */
export interface OpenEnvAnswer {
  readonly observation: Readonly<Record<string, unknown>>;
  /** null where the server sent none (openenv-core's reset usually does not). */
  readonly reward: number | null;
  readonly done: boolean;
}

type Op = 'reset' | 'step' | 'state';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The session's WebSocket address of a server URL: http → ws, https → wss, /ws after its path. */
export function sessionUrl(base: string): string {
  const u = new URL(base);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  u.pathname = `${u.pathname.replace(/\/+$/, '')}/ws`;
  return u.toString();
}

/** A reset's or step's answer data checked against the protocol; throws naming the field that is off. */
export function readAnswer(data: unknown, where: string): OpenEnvAnswer {
  const bad = (what: string): OpenEnvError =>
    new OpenEnvError(
      `${where} answered a malformed observation: ${what}. Fix: the server's environment must return its Observation (openenv-core's serialize_observation shape)`,
    );
  if (!isObject(data)) throw bad(`its data is ${data === null ? 'null' : typeof data}, not {"observation", "reward", "done"}`);
  if (!isObject(data.observation)) throw bad(`data.observation is ${Array.isArray(data.observation) ? 'a list' : typeof data.observation}, not an object`);
  const r = data.reward;
  // openenv-core types the reward bool | int | float | None; a bool counts as Python counts it
  const reward = typeof r === 'boolean' ? Number(r) : r === null || r === undefined ? null : r;
  if (reward !== null && (typeof reward !== 'number' || !Number.isFinite(reward)))
    throw bad(`data.reward is ${JSON.stringify(r)?.slice(0, 80)}, not a number or null`);
  if (typeof data.done !== 'boolean') throw bad(`data.done is ${JSON.stringify(data.done)?.slice(0, 80) ?? 'absent'}, not true or false`);
  return { observation: data.observation, reward, done: data.done };
}

/** A server's error answer as one sentence: its message, code and pydantic's field errors. */
function errorText(data: unknown): string {
  if (!isObject(data)) return JSON.stringify(data)?.slice(0, 300) ?? 'no details';
  const code = typeof data.code === 'string' ? ` (${data.code})` : '';
  const errors = Array.isArray(data.errors)
    ? data.errors
        .slice(0, 5)
        .map((e) => (isObject(e) ? `${Array.isArray(e.loc) ? e.loc.join('.') : '?'}: ${String(e.msg)}` : String(e)))
        .join('; ')
    : '';
  const message = typeof data.message === 'string' ? data.message : JSON.stringify(data.message ?? 'error');
  return `${message.slice(0, 500)}${code}${errors ? ` — ${errors.slice(0, 500)}` : ''}`;
}

const FIX: Readonly<Record<string, string>> = {
  CAPACITY_REACHED: "lower envOptions.concurrency to the server's max_concurrent_envs, or raise that in its create_app",
  VALIDATION_ERROR: "check envOptions.actionField against the server's /schema",
  FACTORY_ERROR: "the server could not make an environment: see the server's log",
};

export class OpenEnvSession {
  private waiter: { op: Op; resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout } | undefined;
  private closed: string | undefined;
  /** The server's error that came before any request (it refused the session): every request's answer. */
  private unasked: OpenEnvError | undefined;

  private constructor(
    private readonly socket: WebSocket,
    /** The session's ws:// address. */
    readonly url: string,
    private readonly timeoutMs: number,
    /** Words about the server's own state (a started server that exited), added to a lost connection's error. */
    private readonly serverNote: () => string,
  ) {
    socket.addEventListener('message', (ev) => this.answer(ev.data));
    socket.addEventListener('close', (ev) => this.lost(`the server closed the session (code ${ev.code}${ev.reason ? `: ${ev.reason}` : ''})`));
    // (an 'error' event is always followed by 'close', whose code says more)
  }

  /** Opens a session at `base` (the server's http URL); rejects naming the address when it cannot connect in time. */
  static open(base: string, timeoutMs: number, serverNote: () => string = () => ''): Promise<OpenEnvSession> {
    const url = sessionUrl(base);
    if (typeof WebSocket !== 'function')
      return Promise.reject(new OpenEnvError(`this Node (${process.version}) has no WebSocket client. Fix: run the workbench on Node 22 or later`));
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      const timer = setTimeout(() => {
        socket.close();
        reject(
          new OpenEnvError(
            `OpenEnv session at ${url}: no connection within ${timeoutMs} ms (envOptions.timeoutMs)${serverNote()}. Fix: is the server running there?`,
          ),
        );
      }, timeoutMs);
      const failed = (why: string): void => {
        clearTimeout(timer);
        reject(new OpenEnvError(`OpenEnv session at ${url}: ${why}${serverNote()}. Fix: start the server there (or check envOptions.url)`));
      };
      socket.addEventListener('error', () => failed('could not connect'), { once: true });
      socket.addEventListener('close', (ev) => failed(`the server closed the connection (code ${ev.code})`), { once: true });
      socket.addEventListener(
        'open',
        () => {
          clearTimeout(timer);
          resolve(new OpenEnvSession(socket, url, timeoutMs, serverNote));
        },
        { once: true },
      );
    });
  }

  /** Starts the session's episode: `args` are reset's keyword arguments (seed, episode_id, the environment's own). */
  async reset(args: Readonly<Record<string, unknown>>): Promise<OpenEnvAnswer> {
    return readAnswer(await this.request('reset', { type: 'reset', data: args }), `OpenEnv session at ${this.url}: reset`);
  }

  /** One action (its fields as the server's action schema names them). */
  async step(action: Readonly<Record<string, unknown>>): Promise<OpenEnvAnswer> {
    return readAnswer(await this.request('step', { type: 'step', data: action }), `OpenEnv session at ${this.url}: step`);
  }

  /** The environment's state (episode_id, step_count and its own fields). */
  async state(): Promise<Readonly<Record<string, unknown>>> {
    const data = await this.request('state', { type: 'state' });
    if (!isObject(data)) throw new OpenEnvError(`OpenEnv session at ${this.url}: state answered ${typeof data}, not an object`);
    return data;
  }

  /** Ends the session (the server drops its environment). Safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = 'the session was closed';
    try {
      if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify({ type: 'close' }));
      this.socket.close();
    } catch {
      // already gone
    }
  }

  /** The session-wide error of a message that came before any request, if it is one. */
  private unaskedError(raw: unknown): OpenEnvError | undefined {
    try {
      const m = JSON.parse(typeof raw === 'string' ? raw : String(raw)) as unknown;
      if (!isObject(m) || m.type !== 'error') return undefined;
      const code = isObject(m.data) && typeof m.data.code === 'string' ? m.data.code : '';
      return new OpenEnvError(
        `OpenEnv session at ${this.url}: the server refused the session: ${errorText(m.data)}${FIX[code] ? `. Fix: ${FIX[code]}` : ''}`,
        code,
      );
    } catch {
      return undefined;
    }
  }

  private request(op: Op, message: Record<string, unknown>): Promise<unknown> {
    if (this.unasked) return Promise.reject(this.unasked);
    if (this.closed) return Promise.reject(new OpenEnvError(`OpenEnv session at ${this.url}: ${op} after ${this.closed}${this.serverNote()}`));
    if (this.waiter) return Promise.reject(new Error(`OpenEnvSession: ${op} while ${this.waiter.op} awaits its answer (one request at a time)`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        this.closed = `${op} went unanswered for ${this.timeoutMs} ms`;
        this.socket.close();
        reject(
          new OpenEnvError(
            `OpenEnv session at ${this.url}: ${op} unanswered within ${this.timeoutMs} ms (envOptions.timeoutMs)${this.serverNote()}. Fix: raise timeoutMs for a slow environment`,
          ),
        );
      }, this.timeoutMs);
      this.waiter = { op, resolve, reject, timer };
      this.socket.send(JSON.stringify(message));
    });
  }

  private answer(raw: unknown): void {
    const w = this.waiter;
    if (!w) {
      // nothing asked: the server's error as it refused the session (CAPACITY_REACHED, FACTORY_ERROR) before
      // any request, kept for the first request to answer with; anything else is not an answer of ours
      this.unasked ??= this.unaskedError(raw);
      return;
    }
    this.waiter = undefined;
    clearTimeout(w.timer);
    const where = `OpenEnv session at ${this.url}: ${w.op}`;
    let m: unknown;
    try {
      m = JSON.parse(typeof raw === 'string' ? raw : String(raw));
    } catch {
      w.reject(new OpenEnvError(`${where} answered something that is not JSON (${String(raw).slice(0, 120)}). Fix: is this an OpenEnv server?`));
      return;
    }
    if (!isObject(m))
      return w.reject(new OpenEnvError(`${where} answered ${JSON.stringify(m).slice(0, 120)}, not a message object. Fix: is this an OpenEnv server?`));
    if (m.type === 'error') {
      const code = isObject(m.data) && typeof m.data.code === 'string' ? m.data.code : '';
      return w.reject(new OpenEnvError(`${where} failed on the server: ${errorText(m.data)}${FIX[code] ? `. Fix: ${FIX[code]}` : ''}`, code));
    }
    const expected = w.op === 'state' ? 'state' : 'observation';
    if (m.type !== expected)
      return w.reject(new OpenEnvError(`${where} answered a message of type ${JSON.stringify(m.type)}, not "${expected}". Fix: is this an OpenEnv server?`));
    w.resolve(m.data);
  }

  private lost(why: string): void {
    if (this.closed) return;
    this.closed = why;
    const w = this.waiter;
    if (!w) return;
    this.waiter = undefined;
    clearTimeout(w.timer);
    w.reject(this.unasked ?? new OpenEnvError(`OpenEnv session at ${this.url}: ${why} during ${w.op}${this.serverNote()}`));
  }
}
