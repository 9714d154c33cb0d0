// Agent RL: Pick a Model…: a checkpoint found in the Hugging Face cache or agentRl.modelFolders (or a
// folder chosen in a dialog), saved as the user setting agentRl.model: Start Run lists it first for a
// model preset, the walkthrough's default experiment uses it when the default preset needs a model, and
// the notification offers Seed 000 on it at once. The walkthrough's last step completes on it.
import * as vscode from 'vscode';
import { messageText } from '../../shared/untrustedText';
import { markWalkthroughStep } from '../walkthrough';
import { pickModel, startRun, type StartRunDeps } from './startRun';

export async function pickModelCommand(deps: StartRunDeps): Promise<void> {
  const backend = await deps.processes.requireBackend();
  if (!backend) return;
  const model = await pickModel(backend, 'Agent RL: Pick a Model');
  if (!model) return;
  await vscode.workspace.getConfiguration('agentRl').update('model', model, vscode.ConfigurationTarget.Global);
  markWalkthroughStep('agentRl.modelPicked');
  const seed = 'Start Seed 000 on It';
  const choice = await vscode.window.showInformationMessage(
    messageText(`Agent RL: your model is ${model} (agentRl.model); Start Run lists it first for Seed 000.`, 600),
    seed,
  );
  if (choice === seed) await startRun(deps, { preset: 'seed000', model });
}
