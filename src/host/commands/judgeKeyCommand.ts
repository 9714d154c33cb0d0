// Agent RL: Set Judge API Key (issue 51) — the key of a judge's endpoint (reward.judge) kept in VS Code's
// SecretStorage and handed to a judged run's worker (only: RunManager.start) in its process environment, as AGENT_RL_JUDGE_API_KEY
// (reward.judge.apiKeyEnv's default), at the moment the worker is forked. It never travels in an IPC
// message, a config, a log line or a view: the worker moves it from its environment into memory at
// startup (judgeKeyStore.ts), so the programs a run starts never inherit it, and sends it only
// as the judge request's Authorization header. An empty entry removes the key.
import * as vscode from 'vscode';

/** Where SecretStorage keeps it. */
const SECRET = 'agentRl.judgeApiKey';
/** The variable the worker gets it in: JUDGE_OPTION_SPECS.apiKeyEnv's default (a run that names another variable reads that one). */
export const JUDGE_KEY_ENV = 'AGENT_RL_JUDGE_API_KEY';

/** The key as held in memory for the next worker fork (loaded from SecretStorage at activation, updated by the command). */
export class JudgeKey {
  private key: string | undefined;
  constructor(private readonly secrets: vscode.SecretStorage) {}

  async load(): Promise<void> {
    this.key = await this.secrets.get(SECRET);
  }

  /** What a worker's environment adds: the variable, or nothing when no key is set. */
  env(): Readonly<Record<string, string>> {
    return this.key ? { [JUDGE_KEY_ENV]: this.key } : {};
  }

  /** Whether a key is stored (Start Run's judge step asks; the value stays here). */
  isSet(): boolean {
    return this.key !== undefined && this.key !== '';
  }

  async set(key: string): Promise<void> {
    if (key === '') await this.secrets.delete(SECRET);
    else await this.secrets.store(SECRET, key);
    this.key = key === '' ? undefined : key;
  }
}

export function registerJudgeKeyCommand(context: vscode.ExtensionContext, judgeKey: JudgeKey): void {
  void judgeKey.load();
  context.subscriptions.push(
    context.secrets.onDidChange((e) => {
      if (e.key === SECRET) void judgeKey.load();
    }),
    vscode.commands.registerCommand('agentRl.setJudgeApiKey', async () => {
      const key = await vscode.window.showInputBox({
        title: 'Agent RL: Set Judge API Key',
        prompt: `The judge endpoint's API key (reward.judge), kept in VS Code's secret storage and given to run workers as ${JUDGE_KEY_ENV}. Empty removes it.`,
        password: true,
        ignoreFocusOut: true,
      });
      if (key === undefined) return; // cancelled: the key stays as it was
      await judgeKey.set(key.trim());
      void vscode.window.showInformationMessage(
        key.trim() === '' ? 'Agent RL: the judge API key was removed.' : 'Agent RL: the judge API key is set for the next runs.',
      );
    }),
  );
}
