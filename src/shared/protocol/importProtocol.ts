// Host ⇄ import worker messages (child_process IPC, JSON): the workbench's "Import Run…" runs
// `importVerl` in a forked Node process (the host never opens the database) and hears of every step.
import { isNumber, isString, oneOf, shape, type Guard } from './guards';

export type HostToImporter =
  | {
      readonly type: 'start';
      readonly db: string;
      readonly rolloutDir: string;
      readonly validationDir?: string;
      readonly configFile?: string;
      /** Keep reading new files and lines until `stop`. */
      readonly follow: boolean;
    }
  /** End a follow after the current step. */
  | { readonly type: 'stop' };

export type ImporterToHost =
  | { readonly type: 'run'; readonly runId: number; readonly name: string; readonly created: boolean }
  | { readonly type: 'step'; readonly runId: number; readonly step: number; readonly added: number }
  | { readonly type: 'evaluation'; readonly runId: number; readonly step: number }
  | { readonly type: 'malformed'; readonly file: string; readonly line: number; readonly reason: string }
  | { readonly type: 'finished'; readonly runId: number; readonly steps: number; readonly trajectories: number; readonly malformed: number }
  | { readonly type: 'failed'; readonly error: string };

const optString = (v: unknown): boolean => v === undefined || isString(v);

export const isHostToImporter: Guard<HostToImporter> = oneOf<HostToImporter>(
  shape('start', { db: isString, rolloutDir: isString, validationDir: optString, configFile: optString, follow: (v) => typeof v === 'boolean' }),
  shape('stop', {}),
);

export const isImporterToHost: Guard<ImporterToHost> = oneOf<ImporterToHost>(
  shape('run', { runId: isNumber, name: isString, created: (v) => typeof v === 'boolean' }),
  shape('step', { runId: isNumber, step: isNumber, added: isNumber }),
  shape('evaluation', { runId: isNumber, step: isNumber }),
  shape('malformed', { file: isString, line: isNumber, reason: isString }),
  shape('finished', { runId: isNumber, steps: isNumber, trajectories: isNumber, malformed: isNumber }),
  shape('failed', { error: isString }),
);
