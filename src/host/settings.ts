// The extension's settings, resolved: a real Node for our processes, the database file, the sandbox,
// how much of a long text the views show, whether the dashboard follows new runs.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { DEFAULT_MAX_TEXT_LENGTH } from '../shared/untrustedText';

const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('agentRl');

const executable = (p: string): boolean => {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
};

/** A usable Node for the worker and the backend, or why there is none (the message names agentRl.nodePath). */
export type NodeResolution = { readonly path: string } | { readonly problem: string };

export function resolveNode(): NodeResolution {
  const configured = config().get<string>('nodePath', '').trim();
  if (configured) {
    return executable(configured)
      ? { path: configured }
      : { problem: `agentRl.nodePath is "${configured}", which is not an executable file. Set agentRl.nodePath to a Node.js 20 (or newer) executable; VS Code’s own runtime cannot load SQLite.` };
  }
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, process.platform === 'win32' ? 'node.exe' : 'node');
    if (executable(p)) return { path: p };
  }
  return { problem: 'Agent RL found no Node.js: there is no `node` on PATH. Install Node.js 20 or newer, or set agentRl.nodePath to a node executable (VS Code’s own runtime cannot load SQLite).' };
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

/** agentRl.maxTextLength: characters of one stored text shown before it is cut (0 = no limit). */
export function maxTextLength(): number {
  const v = config().get<number>('maxTextLength', DEFAULT_MAX_TEXT_LENGTH);
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : DEFAULT_MAX_TEXT_LENGTH;
}

/** agentRl.dashboard.followNewRuns: an open dashboard ticks each run as it starts. */
export function followNewRuns(): boolean {
  return config().get<boolean>('dashboard.followNewRuns', true);
}
