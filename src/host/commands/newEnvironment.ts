// Agent RL: New Environment: writes the workspace-environment template (a task file with
// demonstrations, a Python tool, a Python reward and two run configs) into a folder the user picks,
// never over an existing file, and opens its tool beside the editor in view. The template runs as is
// (Start Run lists its configs); `agent-rl env check --config run.agentrl.json` checks it without
// training. The walkthrough's step completes once the files are written.
import * as vscode from 'vscode';
import { environmentTemplate } from '../../shared/environmentTemplate';
import { messageText } from '../../shared/untrustedText';
import { besideView, markWalkthroughStep } from '../walkthrough';

export async function newEnvironment(): Promise<void> {
  const folders = vscode.workspace.workspaceFolders;
  if (!folders || folders.length === 0) {
    void vscode.window.showErrorMessage('Agent RL: New Environment writes into a workspace folder. Fix: open a folder first (File > Open Folder).');
    return;
  }
  const base = folders.length === 1 ? folders[0]! : await vscode.window.showWorkspaceFolderPick({ placeHolder: 'Workspace folder for the new environment' });
  if (!base) return;
  const name = await vscode.window.showInputBox({
    title: 'Agent RL: New Environment',
    prompt: 'Folder for the environment (inside the workspace folder)',
    value: 'my-environment',
    validateInput: (v) => (/^[\w.-]+(\/[\w.-]+)*$/.test(v.trim()) && !v.split('/').includes('..') ? undefined : 'Letters, digits, ".", "-", "_" and "/" only'),
  });
  if (name === undefined) return;
  const dir = vscode.Uri.joinPath(base.uri, name.trim());
  const files = environmentTemplate();
  const existing: string[] = [];
  for (const f of Object.keys(files)) {
    try {
      await vscode.workspace.fs.stat(vscode.Uri.joinPath(dir, f));
      existing.push(f);
    } catch {
      // free
    }
  }
  if (existing.length > 0) {
    void vscode.window.showErrorMessage(
      `Agent RL: ${messageText(name, 200)} already has ${existing.map((f) => messageText(f, 60)).join(', ')}; nothing was written. Fix: choose another folder name.`,
    );
    return;
  }
  await vscode.workspace.fs.createDirectory(dir);
  for (const [f, content] of Object.entries(files)) await vscode.workspace.fs.writeFile(vscode.Uri.joinPath(dir, f), new TextEncoder().encode(content));
  markWalkthroughStep('agentRl.createdEnvironment');
  await vscode.window.showTextDocument(vscode.Uri.joinPath(dir, 'tools.py'), { preview: false, viewColumn: besideView() });
  void vscode.window.showInformationMessage(
    `Agent RL: wrote a workspace environment to ${messageText(name, 200)} (tasks, tools, reward, sft and run configs). Start Run lists its configs.`,
  );
}
