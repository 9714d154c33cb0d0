// Start Run's "Train a Hugging Face model…" (issues 51 and 53): an environment step (the calculator,
// the code sandbox, a verifiers environment: its module name and arguments, or an OpenEnv server you
// run: its URL, each checked as typed), the model, a method step (GRPO, RS-SFT, or on-policy
// distillation, which then asks for the teacher and refuses one with another tokenizer before anything
// starts). The run is then confirmed, checked and
// named as every Start Run is (startRun.ts); the choices' config is startRunSteps.ts's, tested there.
import * as vscode from 'vscode';
import type { BackendClient } from '../processes/backendClient';
import {
  ENVIRONMENT_CHOICES,
  METHOD_CHOICES,
  moduleNameProblem,
  modelRunConfig,
  openenvUrlProblem,
  parseEnvArgs,
  teacherRefusedMessage,
  type Choice,
} from './startRunSteps';
import type { ModelRunChoices } from './startRunSteps';

/** Start Run's model picker (startRun.ts pickModel), passed in: that module imports this one. */
export type PickModel = (backend: BackendClient, title?: string) => Promise<string | undefined>;

/** One quick pick of choices; undefined when dismissed. */
async function choose<T>(choices: readonly Choice<T>[], title: string, placeHolder: string): Promise<T | undefined> {
  const item = await vscode.window.showQuickPick(
    choices.map((c) => ({ label: c.label, description: c.description, value: c.value })),
    { title, placeHolder },
  );
  return item?.value;
}

/** The verifiers step: the module (imported from the workspace folder first) and load_environment's arguments. */
async function verifiersStep(): Promise<ModelRunChoices['verifiers']> {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (!folder)
    throw new Error('A verifiers environment is imported from the workspace folder, and no folder is open. Fix: open the folder that holds the module');
  const module = await vscode.window.showInputBox({
    title: 'verifiers environment: its module',
    prompt: `The Python module whose load_environment(**args) returns a verifiers Environment: a file in ${folder} (vf_echo for vf_echo.py), or one installed in the interpreter`,
    placeHolder: 'vf_gsm8k',
    validateInput: moduleNameProblem,
  });
  if (module === undefined) return undefined;
  const args = await vscode.window.showInputBox({
    title: 'verifiers environment: load_environment arguments (JSON)',
    prompt: 'Keyword arguments of load_environment as a JSON object ({} for its defaults)',
    value: '{}',
    validateInput: (v) => {
      const parsed = parseEnvArgs(v);
      return 'problem' in parsed ? parsed.problem : undefined;
    },
  });
  if (args === undefined) return undefined;
  const parsed = parseEnvArgs(args);
  if ('problem' in parsed) return undefined; // validateInput let nothing else through
  return { module: module.trim(), args: parsed.args, root: folder };
}

/** The OpenEnv step: the address of a server the user runs (the run checks its /health when it opens). */
async function openenvStep(): Promise<ModelRunChoices['openenv']> {
  const url = await vscode.window.showInputBox({
    title: 'OpenEnv server: its URL',
    prompt:
      'The address of your running OpenEnv server (uvicorn on your app, a container, a Hugging Face Space): the run uses its /health, /schema and WebSocket session /ws. A server the run starts itself is a *.agentrl.json with envOptions.command',
    placeHolder: 'http://127.0.0.1:8000',
    validateInput: openenvUrlProblem,
  });
  return url === undefined ? undefined : { url: url.trim() };
}

/** The steps, in order; undefined when one is dismissed or the teacher is refused (said in a notification). */
export async function modelRunWizard(backend: BackendClient, pickModel: PickModel): Promise<{ readonly config: Record<string, unknown> } | undefined> {
  const env = await choose(ENVIRONMENT_CHOICES, 'Agent RL: Start Run — environment', 'What the model is trained on');
  if (env === undefined) return undefined;
  const verifiers = env === 'verifiers' ? await verifiersStep() : undefined;
  if (env === 'verifiers' && !verifiers) return undefined;
  const openenv = env === 'openenv' ? await openenvStep() : undefined;
  if (env === 'openenv' && !openenv) return undefined;
  const model = await pickModel(backend, 'Agent RL: which model? (the one trained)');
  if (!model) return undefined;
  const method = await choose(METHOD_CHOICES, 'Agent RL: Start Run — method', 'How the model learns');
  if (method === undefined) return undefined;
  let teacher: string | undefined;
  if (method === 'distill') {
    teacher = await pickModel(backend, 'Agent RL: which teacher? (a checkpoint with the same tokenizer as the model, frozen)');
    if (!teacher) return undefined;
    // the run would fail on it when its teacher loads: refused now, with that message
    const problem = await backend.request('checkTeacher', { model, teacher }, 60_000);
    if (problem !== null) {
      void vscode.window.showErrorMessage(teacherRefusedMessage(problem));
      return undefined;
    }
  }
  return {
    config: modelRunConfig({ env, model, method, ...(teacher ? { teacher } : {}), ...(verifiers ? { verifiers } : {}), ...(openenv ? { openenv } : {}) }),
  };
}
