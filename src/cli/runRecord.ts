// The JSON record of a run (`train --output FILE`, `show --json`): config, runtime, every iteration's
// metrics, every evaluation, wall time. The same shape from the trainer's memory and from the database.
import type { FindingRecord } from '../shared/health/findings';
import type { RunConfig } from '../shared/runConfig';
import { collapseText, toolCollapses } from '../shared/toolHealth';
import type { EvaluationResult, IterationMetrics, RunStatus, RuntimeInfo } from '../shared/types';

export interface RunRecord {
  readonly runId: number;
  readonly name: string;
  readonly status: RunStatus;
  /** The honest name of what it trained with (shared/algorithm.ts methodLabel), e.g. "positive-only GRPO (failures not pushed down)". */
  readonly methodLabel: string;
  readonly database: string;
  readonly config: RunConfig;
  /** A forked run: the run and iteration it started from; `iterations` holds its own only (after that one). */
  readonly forkedFrom?: { readonly runId: number | null; readonly iteration: number };
  readonly runtime: RuntimeInfo;
  readonly iterations: readonly IterationMetrics[];
  readonly evaluations: readonly EvaluationResult[];
  /** Wall time of the whole run (ms), including evaluations; null if unknown (a run still going). */
  readonly wallMs: number | null;
  /** What the iterations show that needs a look (a tool's use collapsed: shared/toolHealth.ts), one line each. */
  readonly warnings: readonly string[];
  /** What the stored iterations show going wrong (shared/health/findings.ts), the most severe first, with the episodes that show each. */
  readonly findings: readonly FindingRecord[];
}

/** The record's warnings, from its iterations. */
export function recordWarnings(iterations: readonly IterationMetrics[]): string[] {
  return toolCollapses(iterations).map(collapseText);
}
