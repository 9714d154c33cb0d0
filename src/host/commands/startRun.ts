// Start Run: a preset or a workspace *.agentrl.json, validated first (the first problem in a
// notification, all of them in the output channel); the user's sandbox settings go into a code run's
// envOptions, and a config that names another interpreter or a weaker level is used only after the
// user says so; a config that runs an agent program (env "agent", or "Your own agent program…") runs
// only in a trusted workspace and after the user confirmed the exact command, and a verifiers run only once
// its interpreter (agentRl.verifiersPythonPath where the config names none) imports verifiers; "Train a
// Hugging Face model…" asks for the environment, the model, the method and on GRPO the reward (modelRunWizard.ts;
// a judge typed there is confirmed as a config file's is, confirmJudge); then a name, and progress from the first second (notification with Cancel, status
// bar). Every text from the config (keys, values, file names, the run name) is untrusted: notifications
// and quick picks get it through messageText, the output channel with its invisible characters marked.
// Asked for a preset by id (the walkthrough's "Run the Default Experiment", Pick a Model…'s Seed 000), it
// skips the picker and the name: the preset's own config and name.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { withConfigRoot } from '../../shared/configRoot';
import type { FoundModel } from '../../shared/foundModel';
import { PRESETS, type Preset } from '../../shared/presets';
import { ConfigError, validateRunConfig } from '../../shared/runConfig';
import { messageText, oneLine, showInvisibles } from '../../shared/untrustedText';
import type { LiveRun, LiveRuns } from '../liveRuns';
import type { BackendClient } from '../processes/backendClient';
import type { HostProcesses } from '../processes/hostProcesses';
import { modelItems } from '../pickItems';
import type { RunHandle } from '../processes/runManager';
import { databasePath, sandboxSettings, verifiersPythonSetting } from '../settings';
import { activityText } from '../statusText';
import { judgeGate } from './judgeGate';
import { modelRunWizard } from './modelRunWizard';
import { configProblemMessage, outcomeMessage, sandboxOverrides, sandboxQuestion } from './runMessages';
import { FIRST_AGENT_RUN, verifiersMissingMessage, withVerifiersPython } from './startRunSteps';

export interface StartRunDeps {
  readonly processes: HostProcesses;
  readonly live: LiveRuns;
  readonly output: vscode.OutputChannel;
}

interface Picked {
  readonly config: Record<string, unknown>;
  /** The config file, relative to the workspace (undefined for a preset). */
  readonly file?: string;
}

/** A run on a task file alone: its folder's tools.py and reward.py when they are there, else no tools and exact match. */
async function taskFileConfig(file: vscode.Uri): Promise<Record<string, unknown>> {
  const dir = vscode.Uri.joinPath(file, '..');
  const exists = async (name: string): Promise<boolean> => {
    try {
      await vscode.workspace.fs.stat(vscode.Uri.joinPath(dir, name));
      return true;
    } catch {
      return false;
    }
  };
  return withConfigRoot(
    {
      env: 'workspace',
      policy: 'transformer',
      method: 'grpo',
      envOptions: {
        tasks: path.basename(file.fsPath),
        ...((await exists('tools.py')) ? { tools: 'tools.py' } : {}),
        reward: (await exists('reward.py')) ? 'reward.py' : 'exact_match',
      },
    },
    dir.fsPath,
    path,
  );
}

/** What a caller other than the Command Palette asks Start Run for: a preset by id ("default": agentRl.defaultPreset), and for a model preset the model. */
export interface StartRunRequest {
  readonly preset: string;
  readonly model?: string;
}

/** A preset asked for by id, with its model for a model preset (the one given, else agentRl.model, else asked). */
async function presetConfig(backend: BackendClient, request: StartRunRequest): Promise<Picked | undefined> {
  const id = request.preset === 'default' ? vscode.workspace.getConfiguration('agentRl').get<string>('defaultPreset', 'binary-search-grpo') : request.preset;
  const preset = PRESETS.find((p) => p.id === id);
  if (!preset)
    throw new Error(
      `${request.preset === 'default' ? 'agentRl.defaultPreset is' : 'Start Run was asked for'} "${id}", which names no preset. Fix: one of ${PRESETS.map((p) => p.id).join(', ')}.`,
    );
  return withModel(backend, preset, request.model ?? (savedModel() || undefined));
}

/** A preset's config; a model preset's with the model given, else the one the user picks (undefined: none picked). */
async function withModel(backend: BackendClient, preset: Preset, model?: string): Promise<Picked | undefined> {
  const config = structuredClone(preset.config) as Record<string, unknown>;
  if (preset.needsModel !== true) return { config };
  const dir = model ?? (await pickModel(backend));
  if (!dir) return undefined;
  const po = (config.policyOptions ?? {}) as Record<string, unknown>;
  return { config: { ...config, policyOptions: { ...po, model: dir } } };
}

/** The checkpoint folder Agent RL: Pick a Model… saved ("" when none). */
export function savedModel(): string {
  const m = vscode.workspace.getConfiguration('agentRl').get<unknown>('model', '');
  return typeof m === 'string' ? m : '';
}

async function pickConfig(backend: BackendClient, keyStored: () => boolean): Promise<Picked | undefined> {
  const [files, taskFiles] = await Promise.all([
    vscode.workspace.findFiles('**/*.agentrl.json', '**/node_modules/**', 50),
    vscode.workspace.findFiles('**/*.{jsonl,parquet}', '{**/node_modules/**,**/.agent-rl/**}', 50),
  ]);
  type Item = vscode.QuickPickItem & { preset?: Preset; file?: vscode.Uri; tasks?: vscode.Uri; agent?: true; model?: true };
  const preferred = vscode.workspace.getConfiguration('agentRl').get<string>('defaultPreset', '');
  const presets = [...PRESETS].sort((a, b) => Number(b.id === preferred) - Number(a.id === preferred));
  const items: Item[] = [
    ...presets.map((p) => ({ label: p.label, description: p.description, preset: p })),
    {
      label: 'Your own agent program…',
      description: `a program on an OpenAI client, trained unchanged: pick it, its task file and a model (${FIRST_AGENT_RUN.iterations} iterations of ${FIRST_AGENT_RUN.groupsPerIteration} × ${FIRST_AGENT_RUN.groupSize} episodes)`,
      agent: true,
    },
    {
      label: 'Train a Hugging Face model…',
      description: `pick the environment (calculator, code, your verifiers module, your OpenEnv server or a reasoning-gym task set), the model and the method: GRPO (with a judge's score if you like), RS-SFT or on-policy distillation from a teacher (${FIRST_AGENT_RUN.iterations} iterations of ${FIRST_AGENT_RUN.groupsPerIteration} × ${FIRST_AGENT_RUN.groupSize} episodes)`,
      model: true,
    },
    ...(files.length ? [{ label: 'Config files', kind: vscode.QuickPickItemKind.Separator } as Item] : []),
    ...files.map((f) => ({ label: messageText(path.basename(f.fsPath), 120), description: messageText(vscode.workspace.asRelativePath(f), 200), file: f })),
    ...(taskFiles.length
      ? [{ label: 'Task files (a workspace environment: tools.py and reward.py beside them when present)', kind: vscode.QuickPickItemKind.Separator } as Item]
      : []),
    ...taskFiles.map((f) => ({
      label: messageText(path.basename(f.fsPath), 120),
      description: messageText(vscode.workspace.asRelativePath(f), 200),
      tasks: f,
    })),
  ];
  const choice = await vscode.window.showQuickPick(items, { title: 'Agent RL: Start Run', placeHolder: 'Choose a preset or a *.agentrl.json config' });
  if (!choice) return undefined;
  if (choice.agent) return agentProgramConfig(backend);
  if (choice.model) return modelRunWizard(backend, pickModel, keyStored);
  if (choice.tasks) return { config: await taskFileConfig(choice.tasks), file: vscode.workspace.asRelativePath(choice.tasks) };
  if (choice.preset) return withModel(backend, choice.preset);
  if (!choice.file) return undefined;
  const file = vscode.workspace.asRelativePath(choice.file);
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(await vscode.workspace.fs.readFile(choice.file)));
  } catch (e) {
    throw new Error(`${file}: not valid JSON (${e instanceof Error ? e.message : String(e)}). Fix: correct the JSON syntax.`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error(`${file}: the top level must be a JSON object of run config keys.`);
  // a workspace environment's files are relative to its config
  const config = withConfigRoot(parsed as Record<string, unknown>, path.dirname(choice.file.fsPath), path);
  delete config.$schema; // editors add it for completion
  return { config, file };
}

/** What runs a program file: Python for .py (agentRl.pythonPath, else python3), else Node (node on PATH). */
function interpreterFor(file: string): string {
  if (file.endsWith('.py')) return sandboxSettings().python || 'python3';
  return 'node';
}

/** An agent run from three picks: the program, its task file, a model (the program runs in its own folder). */
async function agentProgramConfig(backend: BackendClient): Promise<Picked | undefined> {
  const [program] =
    (await vscode.window.showOpenDialog({
      title: 'Your agent program (it reads OPENAI_BASE_URL and OPENAI_API_KEY, and prints {"reward": r} last)',
      canSelectMany: false,
      filters: { 'Agent program': ['js', 'mjs', 'cjs', 'ts', 'mts', 'py'] },
    })) ?? [];
  if (!program) return undefined;
  const [tasks] =
    (await vscode.window.showOpenDialog({
      title: 'Its tasks (JSON Lines, JSON, CSV or Parquet: id, prompt, answer)',
      canSelectMany: false,
      defaultUri: vscode.Uri.joinPath(program, '..'),
      filters: { Tasks: ['jsonl', 'json', 'csv', 'parquet'] },
    })) ?? [];
  if (!tasks) return undefined;
  const model = await pickModel(backend);
  if (!model) return undefined;
  const root = path.dirname(program.fsPath);
  return {
    config: {
      env: 'agent',
      policy: 'transformer',
      method: 'grpo',
      // a first run of the program, as examples/own-agent's config: long enough to see its reward move on
      // a laptop, short enough to look at its episodes today (a *.agentrl.json beside it asks for more)
      ...FIRST_AGENT_RUN,
      envOptions: { root, command: [interpreterFor(program.fsPath), path.basename(program.fsPath)], tasks: path.relative(root, tasks.fsPath) },
      policyOptions: { model },
    },
    file: vscode.workspace.asRelativePath(program),
  };
}

/** An object field of a config not yet validated, as a record ({} when it is not an object). */
const record = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {});

/**
 * What a workspace's config would do on the user's behalf (a config file is not the user's word): only in
 * a trusted workspace, and only after the user saw `question` and chose `button` in a modal.
 * `doing` completes "… names/does X, and this workspace is not trusted".
 */
async function askInTrustedWorkspace(p: Picked, doing: string, question: string, detail: string, button: string): Promise<boolean> {
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showErrorMessage(
      messageText(
        `Agent RL: ${p.file ?? 'this config'} ${doing}, and this workspace is not trusted. Fix: trust the workspace (Manage Workspace Trust), then start the run again.`,
        900,
      ),
    );
    return false;
  }
  const choice = await vscode.window.showWarningMessage(messageText(question, 900), { modal: true, detail: messageText(detail, 900) }, button);
  return choice === button;
}

/**
 * A judged run sends every group's trajectories, and the value of the environment variable its config
 * names as the key, to the config's baseUrl: a workspace's config could name any variable and any
 * address, so only in a trusted workspace and only after the user saw both (judgeGate.ts).
 */
function confirmJudge(p: Picked): Promise<boolean> {
  return confirmJudgeOf(p.config, p.file ?? 'this config', 'start the run again');
}

/**
 * The judge gate for any config (Start Run's, or a stored run's that Resume Run or Fork Run continues):
 * true when it has no judge, or the workspace is trusted and the user chose to send to it.
 */
export async function confirmJudgeOf(config: unknown, source: string, again: string): Promise<boolean> {
  const gate = judgeGate(config, vscode.workspace.isTrusted, source, again);
  if (gate.kind === 'go') return true;
  if (gate.kind === 'refuse') {
    void vscode.window.showErrorMessage(gate.message);
    return false;
  }
  const choice = await vscode.window.showWarningMessage(gate.question, { modal: true, detail: gate.detail }, gate.button);
  return choice === gate.button;
}

/**
 * An agent run starts a program as the user, a verifiers run the user's Python on a module, an OpenEnv
 * config with a command its server: only in a trusted workspace, and only after the user saw the exact
 * command (or interpreter and module) and folder.
 */
async function confirmAgentProgram(p: Picked): Promise<boolean> {
  const eo = record(p.config.envOptions);
  // an OpenEnv config runs a program only when it names a command that starts its server (a url runs nothing here)
  const startsServer = p.config.env === 'openenv' && Array.isArray(eo.command) && eo.command.length > 0;
  if (p.config.env !== 'agent' && p.config.env !== 'verifiers' && !startsServer) return true;
  // a verifiers environment: the user's Python imports the module and runs its load_environment
  const text = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v ?? ''));
  const command =
    p.config.env === 'verifiers'
      ? `${eo.python ? JSON.stringify(text(eo.python)) : 'Python ($AGENT_RL_VERIFIERS_PYTHON, else the cached verifiers venv, else python3)'} importing ${JSON.stringify(text(eo.module))} (load_environment(**${JSON.stringify(eo.args ?? {})}))`
      : Array.isArray(eo.command)
        ? eo.command.map((c) => JSON.stringify(String(c))).join(' ')
        : '(none)';
  const where = typeof eo.root === 'string' ? eo.root : '(the config file’s folder)';
  if (command.length + where.length > 700) {
    void vscode.window.showErrorMessage(
      messageText(
        `Agent RL: ${p.file ?? 'this config'} names a program too long to show in full before it runs. Fix: put the command in a script and name that.`,
        900,
      ),
    );
    return false;
  }
  return askInTrustedWorkspace(
    p,
    `runs a program (${command})`,
    p.config.env === 'verifiers'
      ? `Run ${command} in ${where}, as you?`
      : startsServer
        ? `Start ${command} in ${where} (this run's OpenEnv server), as you?`
        : `Run ${command} in ${where} once per episode, as you?`,
    `${p.file ? `${p.file} names this program. ` : ''}It runs with your permissions and is not sandboxed (like npm test); it talks to the policy through a loopback endpoint with a key of this run.`,
    'Run It',
  );
}

/**
 * The checkpoint a model preset runs: one found in the Hugging Face cache or agentRl.modelFolders (with
 * its architecture, size and whether seed 000's plan fits), or a folder chosen in a dialog. The one
 * Pick a Model… saved (agentRl.model) comes first. The picker opens at once, busy while the cache is
 * read (a large cache takes a while), so the choice of a folder never waits for it.
 */
export async function pickModel(backend: BackendClient, title = 'Agent RL: which model?'): Promise<string | undefined> {
  const setting = vscode.workspace.getConfiguration('agentRl').get<unknown>('modelFolders', []);
  const saved = savedModel();
  const folders = [...(Array.isArray(setting) ? setting.filter((f): f is string => typeof f === 'string' && f !== '') : []), ...(saved ? [saved] : [])];
  type Item = vscode.QuickPickItem & { dir?: string };
  const choose: Item = {
    label: 'Choose a Folder…',
    description: 'a Hugging Face checkpoint folder on this machine (config.json, model.safetensors, tokenizer.json)',
  };
  const qp = vscode.window.createQuickPick<Item>();
  qp.title = title;
  qp.matchOnDescription = true;
  qp.items = [choose];
  qp.placeholder = 'Looking in the Hugging Face cache and agentRl.modelFolders…';
  qp.busy = true;
  let found: FoundModel[] = [];
  let closed = false; // a pick made before the cache was read: the list arrives to a disposed picker
  const listed = backend.request('listModels', { folders }).then(
    (models) => models,
    () => [] as FoundModel[], // the folder dialog still works
  );
  const pick = await new Promise<Item | undefined>((resolve) => {
    qp.onDidAccept(() => {
      const item = qp.selectedItems[0];
      if (item) resolve(item); // Enter on a filter that matches nothing keeps the picker open
    });
    qp.onDidHide(() => resolve(undefined));
    qp.show();
    void listed.then((models) => {
      if (closed) return;
      found = [...models.filter((m) => m.dir === saved), ...models.filter((m) => m.dir !== saved)];
      qp.items = [...modelItems(found), ...(found.length ? [{ label: '', kind: vscode.QuickPickItemKind.Separator } as Item] : []), choose];
      qp.placeholder = found.length
        ? 'Models found in the Hugging Face cache and agentRl.modelFolders'
        : 'No model found in the Hugging Face cache: choose its folder';
      qp.busy = false;
    });
  });
  closed = true;
  qp.dispose();
  if (!pick) return undefined;
  if (pick.dir) {
    const m = found.find((x) => x.dir === pick.dir);
    if (m?.problem) throw new Error(`${m.dir}: ${m.problem}`);
    return pick.dir;
  }
  return pickModelFolder();
}

/** A local Hugging Face checkpoint folder, chosen in a folder dialog and checked for its config.json. */
async function pickModelFolder(): Promise<string | undefined> {
  const picked = await vscode.window.showOpenDialog({
    title: 'Agent RL: the Hugging Face checkpoint folder (config.json, model.safetensors, tokenizer.json)',
    openLabel: 'Use This Model',
    canSelectFolders: true,
    canSelectFiles: false,
    canSelectMany: false,
  });
  const folder = picked?.[0];
  if (!folder) return undefined;
  try {
    await vscode.workspace.fs.stat(vscode.Uri.joinPath(folder, 'config.json'));
  } catch {
    throw new Error(
      `${folder.fsPath} holds no config.json, so it is not a Hugging Face checkpoint folder. Fix: choose the folder save_pretrained wrote (config.json, model.safetensors, tokenizer.json); nothing is downloaded`,
    );
  }
  return folder.fsPath;
}

/**
 * A verifiers run's interpreter imports verifiers (checked once confirmed, as the config's own
 * interpreter may be a stranger's): else the run is not started, and the notification says which Python
 * and the fix, with a button to the setting. True for other environments.
 */
async function verifiersInstalled(backend: BackendClient, config: Record<string, unknown>): Promise<boolean> {
  if (config.env !== 'verifiers') return true;
  const eo = (typeof config.envOptions === 'object' && config.envOptions !== null ? config.envOptions : {}) as Record<string, unknown>;
  const python = typeof eo.python === 'string' ? eo.python : '';
  const root = typeof eo.root === 'string' ? eo.root : '';
  const check = backend.request('checkVerifiers', { python, root }, 60_000);
  vscode.window.setStatusBarMessage('$(sync~spin) Agent RL: checking that the Python has verifiers…', check);
  const { problem } = await check;
  if (problem === null) return true;
  const open = 'Open Setting';
  void vscode.window.showErrorMessage(verifiersMissingMessage(problem, verifiersPythonSetting()), open).then((b) => {
    if (b === open) void vscode.commands.executeCommand('workbench.action.openSettings', 'agentRl.verifiersPythonPath');
  });
  return false;
}

/** The user's sandbox settings in a code run's envOptions; a config's own interpreter or weaker level only if the user confirms. */
async function withSandboxSettings(p: Picked): Promise<Record<string, unknown> | undefined> {
  if (p.config.env !== 'code' && p.config.env !== 'workspace') return p.config;
  const s = sandboxSettings();
  const mine = { sandbox: s.sandbox, ...(s.python ? { python: s.python } : {}) };
  const given = p.config.envOptions;
  const asks = sandboxOverrides(given, s);
  let envOptions = { ...mine, ...(typeof given === 'object' && given !== null ? given : {}) };
  if (asks.length > 0) {
    const useConfig = 'Use the Config’s';
    const useMine = 'Use My Settings';
    const choice = await vscode.window.showWarningMessage(
      sandboxQuestion(p.file, asks),
      { modal: true, detail: 'Code the model writes runs with this interpreter at this isolation level.' },
      useMine,
      useConfig,
    );
    if (choice === undefined) return undefined;
    if (choice === useMine) envOptions = { ...envOptions, ...mine, ...(s.python ? {} : { python: '' }) };
  }
  return { ...p.config, envOptions };
}

export async function startRun(deps: StartRunDeps, request?: StartRunRequest): Promise<void> {
  const runs = await deps.processes.requireRuns();
  if (!runs) return;
  const backend = await deps.processes.requireBackend();
  if (!backend) return;
  const chosen = request ? await presetConfig(backend, request) : await pickConfig(backend, () => deps.processes.judgeKeyStored());
  if (!chosen) return;
  const picked = { ...chosen, config: withVerifiersPython(chosen.config, verifiersPythonSetting()) };
  if (!(await confirmAgentProgram(picked))) return;
  if (!(await confirmJudge(picked))) return;
  if (!(await verifiersInstalled(backend, picked.config))) return;
  const raw = await withSandboxSettings(picked);
  if (!raw) return;
  let config;
  try {
    config = validateRunConfig(raw);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    void vscode.window.showErrorMessage(configProblemMessage(picked.file, e.issues));
    deps.output.appendLine(showInvisibles(e.message));
    return;
  }
  const name = request
    ? config.name
    : await vscode.window.showInputBox({
        title: 'Run name',
        value: oneLine(config.name, 200),
        validateInput: (v) => (v.trim() === '' ? 'A run needs a name' : undefined),
      });
  if (name === undefined) return;
  const db = databasePath();
  deps.output.appendLine(`starting "${showInvisibles(name)}" (${config.env} · ${config.policy} · ${config.method}) in ${db}`);
  followRun(deps, runs.start({ ...raw, name }, db), { name, method: config.method, iterations: config.iterations });
}

/** Progress of a started (or resumed) run from its first second: a notification with Cancel, the status bar, and how it ended. */
export function followRun(deps: StartRunDeps, handle: RunHandle, run: { readonly name: string; readonly method: string; readonly iterations: number }): void {
  const { name } = run;
  const live = deps.live.add(handle, run);
  void vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Agent RL: ${messageText(name, 80)}`, cancellable: true },
    async (progress, token) => {
      token.onCancellationRequested(() => handle.cancel());
      let reported = 0;
      const report = (r: LiveRun): void => {
        const done = r.progress?.iteration ?? 0;
        progress.report({ message: activityText(r), increment: (100 * (done - reported)) / Math.max(1, r.iterations) });
        reported = done;
      };
      report(live);
      const subscription = deps.live.onDidChange((r) => {
        if (r === live && !r.outcome) report(r);
      });
      const outcome = await handle.done;
      subscription.dispose();
      void (outcome.kind === 'failed'
        ? vscode.window.showErrorMessage(outcomeMessage(name, outcome))
        : vscode.window.showInformationMessage(outcomeMessage(name, outcome)));
    },
  );
}
