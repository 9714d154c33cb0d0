// `agent-rl sandbox serve`: SandboxFusion's /run_code backed by our sandbox, so verl's
// SandboxFusionTool and sandbox_fusion reward execute in it. Python runs on the warm pool (a fork of a
// warm interpreter per execution); C++, Java, Node.js, Bash and the other languages whose toolchain is
// on the machine run as fresh launcher processes, compile and run phases apart (languages.ts).
// Loopback by default; any other address needs a token (the server refuses to start without one).
// When a request starts is admission.ts's decision: slots bounded by memory, the CPU shared by
// measuring it, and a request that cannot start in time answered 504, which verl's client retries.
import * as crypto from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import type { IsolationLevel } from '../isolation';
import { DEFAULT_LIMITS, type ExecutionResult, type SandboxLimits } from '../limits';
import type { ExecutionIo } from '../warmPool';
import { Admission, type AdmissionStats } from './admission';
import { parseRunCodeRequest, runOutcome, toCommandResult, type RunCodeRequest, type RunCodeResponse } from './fusionProtocol';
import { runLanguage } from './languages';

export interface FusionExecutor {
  readonly level: IsolationLevel;
  /** The interpreter the launcher of the other languages runs on. */
  readonly python: string;
  execute(code: string, limits: SandboxLimits, io?: ExecutionIo): Promise<ExecutionResult>;
}

export interface FusionServerOptions {
  readonly host: string;
  readonly port: number;
  /** Required off loopback; clients send `Authorization: Bearer T` or `?token=T` in the URL (verl sends no headers of its own). */
  readonly token?: string;
  /** Executions at once, at most (bounded by memory; see admission.ts's defaultSlots). */
  readonly concurrency: number;
  readonly queueLimit: number;
  /** The longest a request waits to start before it is answered 504 (ms; default 5 000). */
  readonly maxWaitMs?: number;
  /** Executions that start whatever the CPU's load (default: the machine's cores). */
  readonly cores?: number;
  /** Free memory below which no more executions start (bytes; default 512 MiB). */
  readonly memoryReserveBytes?: number;
  readonly executor: FusionExecutor;
  /** Longest run_timeout and compile_timeout honoured (s); longer requests are cut to it. */
  readonly maxRunTimeoutS: number;
  /** Memory when a request sets none (memory_limit_MB ≤ 0), and the most a request may ask for (MB). */
  readonly defaultMemoryMB: number;
  readonly maxMemoryMB: number;
  /** stdout + stderr bytes after which the code is killed; everything below it is returned. */
  readonly outputCapBytes: number;
}

export class FusionServerError extends Error {
  override name = 'FusionServerError';
}

const MAX_BODY_BYTES = 32 * 1024 * 1024;
/** Below this an interpreter cannot even start its allocator (RLIMIT_AS covers the forked server's own mappings). */
const MIN_MEMORY_MB = 32;
export const MIN_TOKEN_CHARS = 16;
/** How long a request may wait to start by default: inside verl's client timeout (compile + run + 10 s) with room to run. */
export const DEFAULT_MAX_WAIT_MS = 5000;

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Checks the options before anything listens: a server off loopback without a (long enough) token is refused. */
export function checkServerOptions(o: Pick<FusionServerOptions, 'host' | 'token' | 'concurrency' | 'queueLimit' | 'maxWaitMs'>): void {
  if (o.token !== undefined && o.token.length < MIN_TOKEN_CHARS) {
    throw new FusionServerError(`--token: ${o.token.length} characters is guessable. Fix: use at least ${MIN_TOKEN_CHARS}, e.g. $(openssl rand -hex 16).`);
  }
  if (!isLoopback(o.host) && o.token === undefined) {
    throw new FusionServerError(
      `--host ${o.host}: binding off loopback lets anyone who reaches this address run code here, so a token is required. ` +
        'Fix: add --token T (or AGENT_RL_SANDBOX_TOKEN=T) and give verl the URL http://HOST:PORT/run_code?token=T, or bind 127.0.0.1.',
    );
  }
  if (!Number.isInteger(o.concurrency) || o.concurrency < 1) throw new FusionServerError(`--concurrency ${o.concurrency}: use a whole number ≥ 1`);
  if (!Number.isInteger(o.queueLimit) || o.queueLimit < 0) throw new FusionServerError(`--queue ${o.queueLimit}: use a whole number ≥ 0`);
  if (o.maxWaitMs !== undefined && !(o.maxWaitMs >= 0)) throw new FusionServerError(`--max-wait ${o.maxWaitMs / 1000}: use a number of seconds ≥ 0`);
}

/** Our execution result in SandboxFusion's terms (its parse_run_status: a timeout or a non-zero exit is Failed). */
export function toRunCodeResponse(r: ExecutionResult, outputCapBytes: number): RunCodeResponse {
  const run = toCommandResult(r);
  const answer = { compile_result: null, run_result: run, executor_pod_name: null, files: r.files ?? {} };
  if (r.sandboxError !== undefined) return { status: 'SandboxError', message: r.sandboxError, ...answer };
  return { ...runOutcome(run, r, outputCapBytes), ...answer };
}

const timeoutS = (s: number, o: FusionServerOptions): number => Math.min(Math.max(s, 0.001), o.maxRunTimeoutS);

function limitsFor(req: RunCodeRequest, o: FusionServerOptions): SandboxLimits {
  const seconds = timeoutS(req.run_timeout, o);
  const mb = req.memory_limit_MB > 0 ? Math.max(MIN_MEMORY_MB, Math.min(req.memory_limit_MB, o.maxMemoryMB)) : o.defaultMemoryMB;
  return {
    ...DEFAULT_LIMITS,
    timeoutMs: Math.round(seconds * 1000),
    cpuSeconds: Math.ceil(seconds) + 1,
    memoryBytes: mb * 1024 * 1024,
    outputCapBytes: o.outputCapBytes,
    tailBytes: o.outputCapBytes,
  };
}

export interface FusionServerStats {
  served: number;
  /** Answered 504: the queue was full, or no slot came within maxWaitMs. */
  rejected: number;
}

export interface RunningFusionServer {
  readonly url: string;
  readonly port: number;
  readonly stats: FusionServerStats;
  readonly admission: AdmissionStats;
  close(): Promise<void>;
}

function tokenOk(req: http.IncomingMessage, url: URL, token: string | undefined): boolean {
  if (token === undefined) return true;
  const auth = req.headers.authorization;
  const given = auth?.startsWith('Bearer ') ? auth.slice(7) : (url.searchParams.get('token') ?? '');
  const digest = (s: string): Buffer => crypto.createHash('sha256').update(s).digest();
  return crypto.timingSafeEqual(digest(given), digest(token));
}

export async function startFusionServer(o: FusionServerOptions): Promise<RunningFusionServer> {
  checkServerOptions(o);
  const stats: FusionServerStats = { served: 0, rejected: 0 };
  const admission = new Admission({
    slots: o.concurrency,
    queueLimit: o.queueLimit,
    maxWaitMs: o.maxWaitMs ?? DEFAULT_MAX_WAIT_MS,
    cores: o.cores ?? os.availableParallelism(),
    memoryReserveBytes: o.memoryReserveBytes ?? 512 * 1024 * 1024,
  });
  const send = (res: http.ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void => {
    const text = JSON.stringify(body);
    res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
    res.end(text);
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (!tokenOk(req, url, o.token)) {
      send(res, 401, { detail: 'Not authenticated: send Authorization: Bearer <token> or ?token=<token>' }, { 'www-authenticate': 'Bearer' });
      return;
    }
    if (req.method === 'GET' && url.pathname === '/v1/ping') return send(res, 200, 'pong');
    if (url.pathname !== '/run_code') return send(res, 404, { detail: 'Not Found' });
    if (req.method !== 'POST') return send(res, 405, { detail: 'Method Not Allowed' });
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        send(res, 413, { detail: `request body over ${MAX_BODY_BYTES} bytes` });
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => {
      if (size > MAX_BODY_BYTES) return;
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch (e) {
        return send(res, 422, { detail: [{ type: 'json_invalid', loc: ['body', 0], msg: `JSON decode error: ${(e as Error).message}`, input: {} }] });
      }
      const parsed = parseRunCodeRequest(body);
      if (!parsed.ok) return send(res, 422, { detail: parsed.detail });
      const request = parsed.request;
      void admission.acquire().then(async (slot) => {
        if (!slot.ok) {
          stats.rejected += 1;
          return send(res, 504, { detail: `Gateway Timeout: ${slot.reason}; retry later` }, { 'retry-after': '1' });
        }
        try {
          const r = await execute(request);
          stats.served += 1;
          send(res, 200, r, { 'x-agent-rl-queue-ms': slot.waitedMs.toFixed(1) });
        } catch (e) {
          send(res, 200, {
            status: 'SandboxError',
            message: `exception on running code: ${(e as Error).message}`,
            compile_result: null,
            run_result: null,
            executor_pod_name: null,
            files: {},
          } satisfies RunCodeResponse);
        } finally {
          slot.release();
        }
      });
    });
  });
  const execute = async (request: RunCodeRequest): Promise<RunCodeResponse> => {
    const limits = limitsFor(request, o);
    if (request.language !== 'python') {
      return runLanguage(request, {
        level: o.executor.level,
        python: o.executor.python,
        limits,
        compileTimeoutMs: Math.round(timeoutS(request.compile_timeout, o) * 1000),
      });
    }
    const files = Object.fromEntries(Object.entries(request.files).filter((e): e is [string, string] => typeof e[1] === 'string'));
    const r = await o.executor.execute(request.code, limits, {
      ...(request.stdin !== null ? { stdin: request.stdin } : {}),
      files,
      fetchFiles: request.fetch_files,
    });
    return toRunCodeResponse(r, o.outputCapBytes);
  };
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(new FusionServerError(`cannot listen on ${o.host}:${o.port} (${e.code ?? e.message}). Fix: choose another --port or --host.`)),
    );
    server.listen(o.port, o.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = o.host.includes(':') ? `[${o.host}]` : o.host;
  return {
    url: `http://${host}:${port}/run_code`,
    port,
    stats,
    admission: admission.stats,
    close: () =>
      new Promise<void>((resolve) => {
        admission.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
