// Start Run's "Train a Hugging Face model…" (issues 51 and 53): an environment step (the calculator,
// the code sandbox, a verifiers environment: its module name and arguments, an OpenEnv server you
// run: its URL, each checked as typed, or a reasoning-gym task set: a dataset and its held-out split),
// the model, a method step (GRPO, RS-SFT, or on-policy distillation, which then asks for the teacher and
// refuses one with another tokenizer before anything starts), and on GRPO a reward step (the
// environment's alone, or a judge's score added: endpoint, model, rubric, weight, and a key if none is
// there). The run is then confirmed (a judge's address and key variable too), checked and named as
// every Start Run is (startRun.ts); the choices' config is startRunSteps.ts's, tested there.
import * as vscode from 'vscode';
import type { BackendClient } from '../processes/backendClient';
import { readRubricFile } from './rubricFile';
import {
  DEFAULT_WEIGHT,
  judgeKeyAvailable,
  judgeModelProblem,
  judgeUrlProblem,
  noKeyQuestion,
  parseWeight,
  REWARD_CHOICES,
  rubricProblem,
  type JudgeChoices,
} from './judgeSteps';
import { DATASET_CHOICES, datasetNameProblem, HELD_OUT_CHOICES, OTHER_DATASET, type ReasoningGymChoices } from './reasoningGymSteps';
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

/** The reasoning-gym step: a common dataset or one typed by name, then the held-out split (harder first). */
async function reasoningGymStep(): Promise<ReasoningGymChoices | undefined> {
  let dataset = await choose(DATASET_CHOICES, 'reasoning-gym: which dataset?', 'A generated task set, scored by its own score_answer');
  if (dataset === OTHER_DATASET) {
    const typed = await vscode.window.showInputBox({
      title: 'reasoning-gym: the dataset’s name',
      prompt:
        'A dataset registered in reasoning-gym (its default settings; an unknown name is refused when the run opens, with the closest names). Settings of your own: a *.agentrl.json with envOptions.taskConfig (docs/reasoning-gym.md)',
      placeHolder: 'countdown',
      validateInput: datasetNameProblem,
    });
    dataset = typed?.trim();
  }
  if (dataset === undefined) return undefined;
  const heldOut = await choose(HELD_OUT_CHOICES, `reasoning-gym ${dataset}: the held-out split`, 'What the run is evaluated on');
  if (heldOut === undefined) return undefined;
  return { dataset, heldOut, root: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '' };
}

/** A text asked in an input box and checked as typed; undefined when dismissed. */
async function ask(title: string, prompt: string, check: (v: string) => string | undefined, value = '', placeHolder = ''): Promise<string | undefined> {
  const v = await vscode.window.showInputBox({ title, prompt, value, placeHolder, validateInput: check, ignoreFocusOut: true });
  return v?.trim();
}

/** The rubric: one line typed, or a workspace file's text (a file that is not a rubric: said, and nothing chosen). */
async function rubricStep(): Promise<string | undefined> {
  type Item = vscode.QuickPickItem & { file: boolean };
  const how = await vscode.window.showQuickPick<Item>(
    [
      { label: 'Type It', description: 'one line: what a good trajectory does', file: false },
      { label: 'From a File…', description: 'a text or Markdown file of the workspace (its text is the rubric, up to 20,000 characters)', file: true },
    ],
    { title: 'Judge: where the rubric comes from', placeHolder: 'What the judge scores each trajectory against' },
  );
  if (!how) return undefined;
  if (!how.file)
    return ask(
      'Judge: the rubric (one line)',
      'What a good trajectory does, in words (the judge reads the trajectories as data, never as instructions)',
      rubricProblem,
    );
  const [file] =
    (await vscode.window.showOpenDialog({
      title: 'Judge: the rubric’s file',
      canSelectMany: false,
      ...(vscode.workspace.workspaceFolders?.[0] ? { defaultUri: vscode.workspace.workspaceFolders[0].uri } : {}),
      filters: { Rubric: ['md', 'txt'], 'All files': ['*'] },
    })) ?? [];
  if (!file) return undefined;
  // a workspace text file only: a regular, non-symlink file inside a workspace folder, read up to its limit
  const roots = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
  const read =
    file.scheme === 'file'
      ? await readRubricFile(file.fsPath, roots, vscode.workspace.asRelativePath(file))
      : { problem: 'Agent RL: a rubric file must be a file on this machine, inside the workspace' };
  if ('problem' in read) {
    void vscode.window.showErrorMessage(read.problem);
    return undefined;
  }
  return read.rubric;
}

/**
 * The reward step (GRPO): `{}` for the environment's reward alone, `{ judge }` with the judge's fields;
 * undefined when a step is dismissed. With no key stored and none in the variable, it offers Set Judge
 * API Key or going on without one (a local judge); the config never holds the key.
 */
async function rewardStep(keyStored: () => boolean): Promise<{ readonly judge?: JudgeChoices } | undefined> {
  const reward = await choose(REWARD_CHOICES, 'Agent RL: Start Run — reward', "What GRPO's advantages are taken on");
  if (reward === undefined) return undefined;
  if (reward === 'environment') return {};
  const baseUrl = await ask(
    'Judge: its endpoint',
    'The OpenAI-compatible endpoint up to /v1 (the judge posts to its /chat/completions); Start Run asks before it sends anything there',
    judgeUrlProblem,
    '',
    'http://127.0.0.1:8080/v1',
  );
  if (baseUrl === undefined) return undefined;
  const model = await ask('Judge: its model', "The model's name as the endpoint knows it", judgeModelProblem);
  if (model === undefined) return undefined;
  const rubric = await rubricStep();
  if (rubric === undefined) return undefined;
  const weightText = await ask(
    'Judge: its weight',
    "The judge's share of the reward, 0 to 1: reward = (1 − weight) × the environment's + weight × the judge's",
    (v) => {
      const w = parseWeight(v);
      return 'problem' in w ? w.problem : undefined;
    },
    DEFAULT_WEIGHT,
  );
  if (weightText === undefined) return undefined;
  const weight = parseWeight(weightText);
  if ('problem' in weight) return undefined; // validateInput let nothing else through
  if (!judgeKeyAvailable(keyStored(), process.env)) {
    const set = 'Set the Key…';
    const without = 'Continue Without a Key';
    const choice = await vscode.window.showWarningMessage(noKeyQuestion(baseUrl), { modal: true }, set, without);
    if (choice === undefined) return undefined;
    if (choice === set) await vscode.commands.executeCommand('agentRl.setJudgeApiKey');
  }
  return { judge: { baseUrl, model, rubric, weight: weight.weight } };
}

/**
 * The steps, in order; undefined when one is dismissed or the teacher is refused (said in a
 * notification). `keyStored`: whether VS Code stores a judge key (its value stays in JudgeKey).
 */
export async function modelRunWizard(
  backend: BackendClient,
  pickModel: PickModel,
  keyStored: () => boolean,
): Promise<{ readonly config: Record<string, unknown> } | undefined> {
  const env = await choose(ENVIRONMENT_CHOICES, 'Agent RL: Start Run — environment', 'What the model is trained on');
  if (env === undefined) return undefined;
  const verifiers = env === 'verifiers' ? await verifiersStep() : undefined;
  if (env === 'verifiers' && !verifiers) return undefined;
  const openenv = env === 'openenv' ? await openenvStep() : undefined;
  if (env === 'openenv' && !openenv) return undefined;
  const reasoningGym = env === 'reasoning-gym' ? await reasoningGymStep() : undefined;
  if (env === 'reasoning-gym' && !reasoningGym) return undefined;
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
  const reward = method === 'grpo' ? await rewardStep(keyStored) : {};
  if (!reward) return undefined;
  return {
    config: modelRunConfig({
      env,
      model,
      method,
      ...(teacher ? { teacher } : {}),
      ...(verifiers ? { verifiers } : {}),
      ...(openenv ? { openenv } : {}),
      ...(reasoningGym ? { reasoningGym } : {}),
      ...(reward.judge ? { judge: reward.judge } : {}),
    }),
  };
}
