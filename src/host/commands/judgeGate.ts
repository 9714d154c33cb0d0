// Whether a run with a judge may start (issue 51), the decision without VS Code (tested in
// test/unit/host/judgeGate.test.ts). A judged run sends every group's trajectories, and the value of the
// environment variable its config names as the key, to the config's baseUrl. A config file in the
// workspace, and a run stored in a database the workspace holds (.agent-rl/runs.sqlite, a per-workspace
// agentRl.databasePath) that Resume Run or Fork Run continues, are not the user's word: a cloned repo
// could name any variable and any address. So: never in an untrusted workspace, and in a trusted one
// only after a modal that names the address and the variable.
import { judgeTarget } from '../../shared/judgeTarget';
import { messageText } from '../../shared/untrustedText';

export type JudgeGate =
  /** No reward.judge: nothing to ask. */
  | { readonly kind: 'go' }
  /** An untrusted workspace: the error to show, the run not started. */
  | { readonly kind: 'refuse'; readonly message: string }
  /** A trusted workspace: the modal's question and detail; the run starts only on `button`. */
  | { readonly kind: 'ask'; readonly question: string; readonly detail: string; readonly button: string };

/** The button a judged run starts on. */
export const SEND_TO_JUDGE = 'Send to the Judge';

/**
 * The gate for `config` (any shape: read as data). `source` names where it comes from for the messages
 * ("run.agentrl.json", "run 3 in the database"); `again` completes "Fix: trust the workspace, then …"
 * ("start the run again", "resume it again").
 */
export function judgeGate(config: unknown, trusted: boolean, source: string, again: string): JudgeGate {
  const t = judgeTarget(config);
  if (!t) return { kind: 'go' };
  // JSON-quoted and clipped: both come from a file or a database the workspace may have shipped
  const baseUrl = JSON.stringify(t.baseUrl).slice(0, 300);
  const variable = JSON.stringify(t.variable).slice(0, 100);
  if (!trusted)
    return {
      kind: 'refuse',
      message: messageText(
        `Agent RL: ${source} sends trajectories and the key in ${variable} to a judge at ${baseUrl}, and this workspace is not trusted. Fix: trust the workspace (Manage Workspace Trust), then ${again}.`,
        900,
      ),
    };
  return {
    kind: 'ask',
    question: messageText(`Send each group's trajectories and the key in ${variable} to ${baseUrl}?`, 900),
    detail: messageText(`${source} names this judge. The key is sent as the request's bearer token to that address only.`, 900),
    button: SEND_TO_JUDGE,
  };
}
