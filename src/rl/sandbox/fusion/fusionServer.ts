// `agent-rl sandbox serve`: SandboxFusion's /run_code backed by our warm pool, so verl's
// SandboxFusionTool and sandbox_fusion reward execute in our sandbox. Loopback by default; any other
// address needs a token (the server refuses to start without one). At most `concurrency` executions
// run at once (the pool's size); further requests wait in a bounded FIFO queue, and only past its
// limit is a request turned away (503 with Retry-After, which verl's client does not retry: size the
// queue above verl's rate_limit × workers).
import * as crypto from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_LIMITS, type ExecutionResult, type SandboxLimits } from '../limits';
import type { ExecutionIo } from '../warmPool';
import { parseRunCodeRequest, type CommandRunResult, type RunCodeRequest, type RunCodeResponse } from './fusionProtocol';

export interface FusionExecutor {
  readonly level: string;
  execute(code: string, limits: SandboxLimits, io?: ExecutionIo): Promise<ExecutionResult>;
}

export interface FusionServerOptions {
  readonly host: string;
  readonly port: number;
  /** Required off loopback; clients send `Authorization: Bearer T` or `?token=T` in the URL (verl sends no headers of its own). */
  readonly token?: string;
  readonly concurrency: number;
  readonly queueLimit: number;
  readonly executor: FusionExecutor;
  /** Longest run_timeout honoured (s); longer requests are cut to it. */
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

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Checks the options before anything listens: a server off loopback without a (long enough) token is refused. */
export function checkServerOptions(o: Pick<FusionServerOptions, 'host' | 'token' | 'concurrency' | 'queueLimit'>): void {
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
}

/** Our execution result in SandboxFusion's terms (its parse_run_status: a timeout or a non-zero exit is Failed). */
export function toRunCodeResponse(r: ExecutionResult, outputCapBytes: number): RunCodeResponse {
  const answer = (status: RunCodeResponse['status'], message: string, run: CommandRunResult): RunCodeResponse => ({
    status,
    message,
    compile_result: null,
    run_result: run,
    executor_pod_name: null,
    files: r.files ?? {},
  });
  if (r.sandboxError !== undefined)
    return answer('SandboxError', r.sandboxError, { status: 'Error', execution_time: null, return_code: null, stdout: null, stderr: r.sandboxError });
  const time = r.durationMs / 1000;
  if (r.timedOut) return answer('Failed', '', { status: 'TimeLimitExceeded', execution_time: time, return_code: null, stdout: r.stdout, stderr: r.stderr });
  // A process killed by a signal reports −signal, as Python's subprocess does (SandboxFusion passes that on).
  const signal = typeof r.signal === 'number' ? r.signal : r.outputCapped ? 9 : null;
  const code = r.exitCode ?? (signal !== null ? -signal : -9);
  const message = r.outputCapped ? `output passed ${outputCapBytes} bytes: the process was killed and the output cut` : '';
  return answer(code === 0 ? 'Success' : 'Failed', message, {
    status: 'Finished',
    execution_time: time,
    return_code: code,
    stdout: r.stdout,
    stderr: r.stderr,
  });
}

function limitsFor(req: RunCodeRequest, o: FusionServerOptions): SandboxLimits {
  const seconds = Math.min(Math.max(req.run_timeout, 0.001), o.maxRunTimeoutS);
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
  rejected: number;
  active: number;
  queued: number;
  maxActive: number;
  maxQueued: number;
}

export interface RunningFusionServer {
  readonly url: string;
  readonly port: number;
  readonly stats: FusionServerStats;
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
  const stats: FusionServerStats = { served: 0, rejected: 0, active: 0, queued: 0, maxActive: 0, maxQueued: 0 };
  const waiting: (() => void)[] = [];
  const acquire = async (): Promise<boolean> => {
    if (stats.active >= o.concurrency) {
      if (waiting.length >= o.queueLimit) return false;
      stats.queued += 1;
      stats.maxQueued = Math.max(stats.maxQueued, stats.queued);
      await new Promise<void>((resolve) => waiting.push(resolve));
      stats.queued -= 1;
    }
    stats.active += 1;
    stats.maxActive = Math.max(stats.maxActive, stats.active);
    return true;
  };
  const release = (): void => {
    stats.active -= 1;
    waiting.shift()?.();
  };
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
      if (request.language !== 'python') {
        const answer: RunCodeResponse = {
          status: 'SandboxError',
          message: `language ${request.language} is not run by agent-rl sandbox serve (python only); use SandboxFusion itself for it`,
          compile_result: null,
          run_result: null,
          executor_pod_name: null,
          files: {},
        };
        return send(res, 200, answer);
      }
      const queuedAt = performance.now();
      void acquire().then(async (ok) => {
        if (!ok) {
          stats.rejected += 1;
          return send(res, 503, { detail: `queue full (${o.queueLimit} waiting, ${o.concurrency} running)` }, { 'retry-after': '1' });
        }
        const waitedMs = performance.now() - queuedAt;
        try {
          const files = Object.fromEntries(Object.entries(request.files).filter((e): e is [string, string] => typeof e[1] === 'string'));
          const r = await o.executor.execute(request.code, limitsFor(request, o), {
            ...(request.stdin !== null ? { stdin: request.stdin } : {}),
            files,
            fetchFiles: request.fetch_files,
          });
          stats.served += 1;
          send(res, 200, toRunCodeResponse(r, o.outputCapBytes), { 'x-agent-rl-queue-ms': waitedMs.toFixed(1) });
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
          release();
        }
      });
    });
  });
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
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
