// The extension's settings, resolved: what the runtime resolution reads, the database file, the sandbox,
// how much of a long text the views show, whether the dashboard follows new runs.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { DEFAULT_MAX_TEXT_LENGTH } from '../shared/untrustedText';
import type { HostFacts } from './processes/runtime';

const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('agentRl');

/** What the runtime resolution reads: agentRl.nodePath and the extension host's own runtime (runtime.ts). */
export function runtimeFacts(): HostFacts {
  return {
    configured: config().get<string>('nodePath', '').trim(),
    execPath: process.execPath,
    versions: process.versions,
    pathEnv: process.env.PATH ?? '',
    platform: process.platform,
  };
}

/**
 * Opens agentRl.nodePath in the Settings editor, on the tab where a machine setting lives: User on a
 * local window, Remote where the extension host runs on another machine (SSH, WSL, code-server).
 */
export async function openNodePathSetting(): Promise<void> {
  if (vscode.env.remoteName) await vscode.commands.executeCommand('workbench.action.openRemoteSettings', { query: 'agentRl.nodePath' });
  else await vscode.commands.executeCommand('workbench.action.openSettings', 'agentRl.nodePath');
}

/** agentRl.databasePath (absolute, or relative to the first workspace folder), else <folder>/.agent-rl/runs.sqlite — the CLI's default too. */
export function databasePath(): string {
  const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? process.cwd();
  const configured = config().get<string>('databasePath', '').trim();
  if (configured) return path.isAbsolute(configured) ? configured : path.join(root, configured);
  return path.join(root, '.agent-rl', 'runs.sqlite');
}

/** The user's interpreter and isolation level: what runs code, whatever a stored run says. */
export function sandboxSettings(): { python: string; sandbox: string } {
  const c = config();
  return { python: c.get<string>('pythonPath', '').trim(), sandbox: c.get<string>('sandboxLevel', 'auto') };
}

/** agentRl.verifiersPythonPath: the Python with verifiers a verifiers environment runs on ('' = the machine's default: $AGENT_RL_VERIFIERS_PYTHON, the cached venv, python3). */
export function verifiersPythonSetting(): string {
  const v = config().get<unknown>('verifiersPythonPath', '');
  return typeof v === 'string' ? v.trim() : '';
}

/** agentRl.maxTextLength: characters of one stored text shown before it is cut (0 = no limit). */
export function maxTextLength(): number {
  const v = config().get<number>('maxTextLength', DEFAULT_MAX_TEXT_LENGTH);
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : DEFAULT_MAX_TEXT_LENGTH;
}

/** agentRl.dashboard.followNewRuns: an open dashboard ticks each run as it starts. */
export function followNewRuns(): boolean {
  return config().get<boolean>('dashboard.followNewRuns', true);
}
