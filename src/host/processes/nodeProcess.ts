// Forking our Node entry points (worker, backend) with a real Node binary: VS Code's own runtime
// (Electron) cannot load better-sqlite3, so the host never opens the database itself.
import { fork, type ChildProcess } from 'node:child_process';

export class NodeNotFoundError extends Error {
  constructor(nodePath: string, detail: string) {
    super(`Could not start Node at "${nodePath}" (${detail}). Fix: install Node.js 20 or newer, or set agentRl.nodePath to a node executable.`);
    this.name = 'NodeNotFoundError';
  }
}

export interface ForkOptions {
  /** A real Node executable (setting agentRl.nodePath, else `node` on PATH). */
  readonly nodePath: string;
  readonly script: string;
  readonly args?: readonly string[];
  readonly cwd?: string;
  /** Lines the child writes to stderr (an output channel in VS Code). */
  readonly onStderr?: (line: string) => void;
}

export function forkNode(o: ForkOptions): ChildProcess {
  const child = fork(o.script, [...(o.args ?? [])], {
    execPath: o.nodePath,
    cwd: o.cwd,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    serialization: 'json',
  });
  let buf = '';
  const onData = (d: Buffer): void => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      o.onStderr?.(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
  };
  child.stderr?.on('data', onData);
  child.stdout?.on('data', onData);
  return child;
}
