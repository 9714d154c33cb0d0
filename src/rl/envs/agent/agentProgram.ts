// The user's agent program as the agent environment (agentEnv.ts) sees it from outside: the path that
// runs (resolved once, when the run opens), the reward line it printed, and the error naming what to
// fix when it does not behave.
import * as path from 'node:path';
import { findOnPath } from '../../sandbox/isolation';

export class AgentEnvError extends Error {
  override name = 'AgentEnvError';
  /** A program, task file or reward that cannot be used is bad input: agent-rl exits 2 (src/cli/exitCodes.ts). */
  readonly exitCode = 2;
}

/**
 * The program to start: a bare name is looked up on PATH (never in the run's folder first, as Windows
 * would), a relative path is the config folder's; the absolute path is what runs.
 */
export function resolveProgram(cmd: string, root: string): string {
  if (path.isAbsolute(cmd)) return cmd;
  if (cmd.includes('/') || cmd.includes('\\')) return path.resolve(root, cmd);
  const found = findOnPath(cmd);
  if (!found) throw new AgentEnvError(`envOptions.command: "${cmd}" is not on PATH. Fix: install it, or give its absolute path`);
  return found;
}

/** The last line of a program's output that is a JSON object (it may print other things, JSON or not, before it). */
export function lastJsonObject(stdout: string): Record<string, unknown> | undefined {
  for (const line of stdout.split('\n').reverse()) {
    const t = line.trim();
    if (!t.startsWith('{')) continue;
    try {
      const v = JSON.parse(t) as unknown;
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
    } catch {
      // not JSON: an earlier line may be
    }
  }
  return undefined;
}
