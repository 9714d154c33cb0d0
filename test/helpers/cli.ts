// Runs the built CLI (dist/cli.js) as a real process.
import { spawn, spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..', '..');
export const CLI = path.join(ROOT, 'dist', 'cli.js');

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `timeoutMs`: how long it may run before it is killed (two minutes; longer for a run that starts a slow server). */
export function runCli(args: readonly string[], cwd: string, env?: Record<string, string>, timeoutMs = 120_000): CliResult {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: timeoutMs, env: env ? { ...process.env, ...env } : process.env });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export function startCli(args: readonly string[], cwd: string) {
  return spawn(process.execPath, [CLI, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
}

export function tempDir(prefix = 'agent-rl-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function sha256(file: string): string {
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}
