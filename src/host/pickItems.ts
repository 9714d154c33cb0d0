// Quick-pick items built from stored or found data (pure, tested without VS Code): Compare Runs' runs,
// Export Run's runs, Start Run's models, Replay Episode's failed episodes. Names, statuses, methods, model types and folders are
// untrusted; every text goes through messageText (one line, invisibles marked, link and icon syntax
// broken) so that a quick pick shows it as text.
import { describeFit, type FoundModel } from '../shared/foundModel';
import type { FailedCodeEpisode } from '../shared/protocol/backendProtocol';
import type { RunSummary } from '../shared/types';
import { fixed, parameters as parameterText } from '../shared/format';
import { messageText } from '../shared/untrustedText';

export interface PickItem {
  readonly label: string;
  readonly description?: string;
  readonly detail?: string;
}

/** Compare Runs: every stored run, searchable by name, environment, policy and method. */
export function compareRunItems(runs: readonly RunSummary[], selected: readonly number[]): (PickItem & { readonly picked: boolean; readonly id: number })[] {
  return runs.map((r) => ({
    label: messageText(r.name, 200),
    description: messageText(`run ${r.id} · ${r.env} · ${r.policy} · ${r.methodLabel}`, 160),
    detail: messageText(
      `${r.status} · ${r.iterationsDone}/${r.iterationsPlanned} iterations${typeof r.latestRewardMean === 'number' ? ` · reward ${fixed(r.latestRewardMean, 3)}` : ''} · ${String(r.createdAt).replace('T', ' ').slice(0, 19)}`,
      160,
    ),
    picked: selected.includes(r.id),
    id: r.id,
  }));
}

/** Export Run without a row selected: which run. */
export function exportRunItems(runs: readonly RunSummary[]): (PickItem & { readonly id: number })[] {
  return runs.map((r) => ({ label: messageText(r.name, 200), description: messageText(`run ${r.id} · ${r.status}`), id: r.id }));
}

/** Start Run's model step: the checkpoints found in the Hugging Face cache and agentRl.modelFolders. */
export function modelItems(found: readonly FoundModel[]): (PickItem & { readonly dir: string })[] {
  return found.map((m) => ({
    label: messageText(m.name, 120),
    description: messageText(
      m.problem
        ? 'cannot load'
        : `${m.modelType ?? ''} · ${parameterText(m.parameters ?? 0)} parameters · ${m.dtypes ?? ''}${m.revision ? ` · ${m.revision.slice(0, 8)}${m.main ? ' (main)' : ''}` : ''}`,
      200,
    ),
    detail: messageText(`${describeFit(m)} — ${m.dir}`, 400),
    dir: m.dir,
  }));
}

/** Replay Episode without a tree row, when the newest run has none: each recent run's newest failed episode that ran code. */
export function failedEpisodeItems(runs: readonly FailedCodeEpisode[]): (PickItem & { readonly trajectoryId: number })[] {
  return runs.flatMap(({ run, trajectory: t }) =>
    t
      ? [
          {
            label: messageText(run.name, 200),
            description: messageText(`run ${run.id} · ${run.env} · iteration ${t.iteration} · ${t.taskId}`, 200),
            detail: messageText(`reward ${fixed(t.reward, 2, '?')} · ${t.turns} turns · ${t.termination}`, 200),
            trajectoryId: t.id,
          },
        ]
      : [],
  );
}
