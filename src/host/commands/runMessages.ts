// What Start Run says (pure, tested without VS Code). Config keys and values, file names, run names and
// failure reasons are untrusted: every message goes through messageText, which breaks the link and icon
// syntax VS Code renders in notifications.
import { ISOLATION_LEVELS } from '../../shared/optionSpecs';
import type { ConfigIssue } from '../../shared/runConfig';
import { messageText } from '../../shared/untrustedText';
import type { RunOutcome } from '../processes/runManager';

/** The first problem of an invalid config (all of them go to the output channel). */
export function configProblemMessage(file: string | undefined, issues: readonly ConfigIssue[]): string {
  const first = issues[0];
  const more = issues.length > 1 ? ` (${issues.length - 1} more in the Agent RL output)` : '';
  return messageText(`Run config${file ? ` ${file}` : ''}: ${first ? `${first.field} — ${first.message}. Fix: ${first.fix}` : 'invalid'}${more}`, 600);
}

export function outcomeMessage(name: string, outcome: RunOutcome): string {
  return messageText(
    outcome.kind === 'failed'
      ? `Agent RL: run "${name}" failed: ${outcome.reason}`
      : `Agent RL: run "${name}" ${outcome.status}.${healthNote(outcome.findings)}`,
    600,
  );
}

/** A severe finding that a live run's iterations show for the first time: one warning each (the summary may quote a stored name). */
export function findingMessage(name: string, finding: { readonly id: string; readonly summary: string }): string {
  return messageText(`Agent RL: run "${name}": ${finding.id} — ${finding.summary}. The dashboard's Health section shows the episodes.`, 600);
}

/** The run's severe findings at its end, named once in its outcome notification (not one per iteration); the dashboard's Health section has them all. */
function healthNote(findings: readonly { readonly id: string; readonly severity: string }[] | undefined): string {
  const severe = [...new Set((findings ?? []).filter((f) => f.severity === 'severe').map((f) => f.id))];
  return severe.length ? ` Severe finding${severe.length === 1 ? '' : 's'}: ${severe.join(', ')} (the dashboard's Health section shows the episodes).` : '';
}

// A workspace config the user picks in Start Run is their input, but it may come from a repository they
// cloned: where it names another interpreter than agentRl.pythonPath or a weaker sandbox level than
// agentRl.sandboxLevel, Start Run asks before using it.
const LEVELS: readonly string[] = ISOLATION_LEVELS;

/** True when `level` may isolate less than `setting` ('auto' = the strongest available, so any named level but strict). */
function weaker(level: string, setting: string): boolean {
  const a = LEVELS.indexOf(level === 'auto' ? 'strict' : level);
  const b = LEVELS.indexOf(setting === 'auto' ? 'strict' : setting);
  return a < 0 || (b >= 0 && a > b);
}

/** What a config's envOptions ask for that the user's sandbox settings would not give. */
export function sandboxOverrides(envOptions: unknown, settings: { readonly python: string; readonly sandbox: string }): string[] {
  if (typeof envOptions !== 'object' || envOptions === null) return [];
  const o = envOptions as Record<string, unknown>;
  const out: string[] = [];
  if (o.python !== undefined && o.python !== '' && o.python !== settings.python)
    out.push(`the interpreter ${JSON.stringify(o.python)} (agentRl.pythonPath: ${settings.python === '' ? 'the default' : JSON.stringify(settings.python)})`);
  if (o.sandbox !== undefined && o.sandbox !== settings.sandbox && weaker(typeof o.sandbox === 'string' ? o.sandbox : '', settings.sandbox))
    out.push(`the sandbox level ${JSON.stringify(o.sandbox)} (agentRl.sandboxLevel: ${settings.sandbox})`);
  return out;
}

export function sandboxQuestion(file: string | undefined, asks: readonly string[]): string {
  return messageText(`${file ?? 'This config'} asks to run the model’s code with ${asks.join(' and ')}.`, 800);
}
