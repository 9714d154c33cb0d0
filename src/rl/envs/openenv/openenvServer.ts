// The OpenEnv server of a run: one already running at envOptions.url, or one the config's command
// starts (as the user, in its root, its own process group on POSIX) on a free loopback port that
// replaces {port} in its arguments (and is $PORT), waited for until its /health answers, and stopped
// when the run's environment is disposed (or this process ends: programGroups). Plus the two HTTP
// requests a run makes before its sessions: GET /health and GET /schema.
import { spawn, type ChildProcess } from 'node:child_process';
import * as net from 'node:net';
import { resolveProgram } from '../agent/agentProgram';
import { killGroup, programGroups } from '../agent/programGroups';
import { OpenEnvError } from './openenvSession';

const OUTPUT_TAIL = 4096;
/** How often a starting server's /health is asked (ms). */
const POLL_MS = 200;

/** GET `base`/`route` as JSON, in `timeoutMs`; throws naming the address and what failed. */
export async function getJson(base: string, route: string, timeoutMs: number): Promise<unknown> {
  const url = `${base.replace(/\/+$/, '')}${route}`;
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (e) {
    const cause = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).name;
    throw new OpenEnvError(
      `no OpenEnv server answers at ${url} (${cause}). Fix: start the server (or check envOptions.url), or give envOptions.command that starts one`,
    );
  }
  const body = await res.text();
  if (!res.ok)
    throw new OpenEnvError(`${url} answered HTTP ${res.status} (${body.slice(0, 200)}). Fix: is this an OpenEnv server (openenv-core's create_app)?`);
  try {
    return JSON.parse(body) as unknown;
  } catch {
    throw new OpenEnvError(`${url} answered something that is not JSON (${body.slice(0, 120)}). Fix: is this an OpenEnv server (openenv-core's create_app)?`);
  }
}

/** A port no one listens on now, on loopback. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (typeof a === 'object' && a ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
}

export class OpenEnvServer {
  private ended: string | undefined;
  private output = '';

  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
    readonly label: string,
  ) {
    if (child.pid !== undefined) programGroups.add(child.pid);
    const keep = (d: Buffer): void => {
      this.output = (this.output + d.toString('utf8')).slice(-OUTPUT_TAIL);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.on('error', (e) => this.end(`it could not be started: ${e.message}`));
    child.on('close', (code, signal) => this.end(signal ? `stopped by ${signal}` : `exit code ${code}`));
  }

  /**
   * Starts `command` in `root` on a free loopback port and waits for its /health; throws naming the
   * command with the end of its output when it exits first or is not up within `timeoutMs`.
   */
  static async start(command: readonly string[], root: string, timeoutMs: number): Promise<OpenEnvServer> {
    if (command.length === 0 || command[0] === '') throw new OpenEnvError('envOptions.command is empty. Fix: name the program that starts the server');
    const program = resolveProgram(command[0]!, root);
    const port = await freePort();
    const args = command.slice(1).map((a) => a.replaceAll('{port}', String(port)).replaceAll('{host}', '127.0.0.1'));
    const child = spawn(program, args, {
      cwd: root,
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: process.platform !== 'win32',
      windowsHide: true,
    });
    const server = new OpenEnvServer(child, `http://127.0.0.1:${port}`, JSON.stringify(command));
    try {
      await server.healthy(timeoutMs);
      return server;
    } catch (e) {
      await server.stop();
      throw e;
    }
  }

  private async healthy(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.ended)
        throw new OpenEnvError(
          `the OpenEnv server command ${this.label} ended before its /health answered (${this.ended})${this.tail()}. Fix: run it by hand in envOptions.root to see why, and put {port} where it takes its port`,
        );
      try {
        await getJson(this.url, '/health', Math.max(100, Math.min(2000, deadline - Date.now())));
        return;
      } catch {
        // not up yet
      }
      if (Date.now() >= deadline)
        throw new OpenEnvError(
          `the OpenEnv server command ${this.label} did not answer ${this.url}/health within ${timeoutMs} ms (envOptions.startTimeoutMs)${this.tail()}. Fix: put {port} where it takes its port (and 127.0.0.1 as its host), or raise startTimeoutMs`,
        );
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  private tail(): string {
    const t = this.output.trim().split('\n').slice(-5).join(' | ');
    return t ? `; its output ends: ${t.slice(-800)}` : '';
  }

  /** Words for an episode's error when the server has exited: why, and its output's end; '' while it runs. */
  note(): string {
    return this.ended ? ` (the server command ${this.label} ended: ${this.ended}${this.tail()})` : '';
  }

  private end(why: string): void {
    if (this.ended) return;
    this.ended = why;
    if (this.child.pid !== undefined) programGroups.delete(this.child.pid);
  }

  /** Stops the server: SIGTERM to its group, then, after 3 s, SIGKILL. Safe to call twice. */
  async stop(): Promise<void> {
    if (this.ended || this.child.pid === undefined) return;
    const pid = this.child.pid;
    const closed = new Promise<void>((resolve) => {
      const t = setTimeout(resolve, 3000);
      this.child.once('close', () => {
        clearTimeout(t);
        resolve();
      });
    });
    try {
      if (process.platform === 'win32') killGroup(pid);
      else process.kill(-pid, 'SIGTERM');
    } catch {
      // already gone
    }
    await closed;
    killGroup(pid);
    this.end('the run ended');
  }
}
