// Forking our Node entry points (worker, backend, importer) on the runtime resolveRuntime() chose and
// probed (runtime.ts): agentRl.nodePath, VS Code's own runtime (ELECTRON_RUN_AS_NODE=1), or `node` on
// PATH. The host itself never opens the database.
import { fork, type ChildProcess } from 'node:child_process';
import type { ProcessRuntime } from './runtime';

export class NodeNotFoundError extends Error {
  constructor(execPath: string, detail: string) {
    super(
      `Could not start the runtime at "${execPath}" (${detail}). Fix: set agentRl.nodePath to Node.js 22.14 or newer, or clear it to use VS Code’s own runtime.`,
    );
    this.name = 'NodeNotFoundError';
  }
}

export interface ForkOptions {
  /** The probed runtime (runtime.ts). */
  readonly runtime: ProcessRuntime;
  readonly script: string;
  readonly args?: readonly string[];
  readonly cwd?: string;
  /** Lines the child writes to stderr (an output channel in VS Code). */
  readonly onStderr?: (line: string) => void;
  /** Variables added to the child's environment, read when it is forked (a judged run's worker only: the judge key, commands/judgeKeyCommand.ts; RunManager.start decides). */
  readonly extraEnv?: () => Readonly<Record<string, string>>;
}

export function forkNode(o: ForkOptions): ChildProcess {
  const child = fork(o.script, [...(o.args ?? [])], {
    execPath: o.runtime.execPath,
    // the extension host's own flags (an inspector port, Electron switches) are not ours to inherit
    execArgv: [],
    env: { ...process.env, ...o.runtime.env, ...(o.extraEnv?.() ?? {}) },
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
