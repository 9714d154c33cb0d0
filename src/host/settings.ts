// The extension's settings, resolved: a real Node for our processes, the database file.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

export function nodePath(): string | undefined {
  const configured = vscode.workspace.getConfiguration('agentRl').get<string>('nodePath', '').trim();
  if (configured) return configured;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, process.platform === 'win32' ? 'node.exe' : 'node');
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      // keep looking
    }
  }
  return undefined;
}

/** agentRl.databasePath (absolute, or relative to the first workspace folder), else <folder>/.agent-rl/runs.sqlite — the CLI's default too. */
export function databasePath(): string {
  const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? process.cwd();
  const configured = vscode.workspace.getConfiguration('agentRl').get<string>('databasePath', '').trim();
  if (configured) return path.isAbsolute(configured) ? configured : path.join(root, configured);
  return path.join(root, '.agent-rl', 'runs.sqlite');
}

/** Settings that go into a run config's envOptions where the environment has them. */
export function sandboxSettings(): { python: string; sandbox: string } {
  const c = vscode.workspace.getConfiguration('agentRl');
  return { python: c.get<string>('pythonPath', ''), sandbox: c.get<string>('sandboxLevel', 'auto') };
}
