// Every host renderer that can run without VS Code, over what the backend hands the host for one run
// (the same handlers the extension's backend process answers with): tree rows, tooltips, notifications,
// quick-pick items, the status bar, the trajectory document, replay decorations, the output channel's
// lines, the dashboard's legends. Each output says what renders it, and so which checks apply:
//   text      plain text shown as text (output channel, plain tooltips, a webview's textContent/title)
//   line      one line of plain text (tree labels and descriptions, legends, decorations)
//   message   one line VS Code parses for links and icons (notifications, quick picks, the status bar)
//   markdown  untrusted Markdown (tree tooltips, hovers, the trajectory document and its preview)
// The matrix test checks that every pure module under src/host exports nothing that is missing here
// or in NOT_RENDERERS, so a new renderer is covered (or excused, with the reason) when it is written.
import { rerunNotes } from '../../src/backend/rerun';
import { judgeGate } from '../../src/host/commands/judgeGate';
import { configProblemMessage, findingMessage, outcomeMessage, sandboxOverrides, sandboxQuestion } from '../../src/host/commands/runMessages';
import {
  importErrorLine,
  importFailedMessage,
  importFinishedMessage,
  importPickTitle,
  importProgressTitle,
  importStartLine,
  malformedLine,
} from '../../src/host/commands/importMessages';
import { renderRescore } from '../../src/host/commands/rescoreMarkdown';
import { renderTrajectory } from '../../src/host/commands/trajectoryMarkdown';
import { compareRunItems, exportRunItems, failedEpisodeItems, modelItems, type PickItem } from '../../src/host/pickItems';
import { decorationText, inlineObservation, observationHover, rerunMessage, rerunOutput, resendMessage, resendOutput } from '../../src/host/replay/replayModel';
import type { ResendResult } from '../../src/shared/agentRequestView';
import { activityText, activityTooltip, endedText, runLabel, statusText, type LiveRunView } from '../../src/host/statusText';
import {
  describeRun,
  groupParts,
  healthBadge,
  groupTrajectories,
  iterationParts,
  messageParts,
  runParts,
  trajectoryParts,
  turnParts,
  type ItemParts,
} from '../../src/host/views/treeModel';
import { baseWeightsNote, runRuntimeLines } from '../../src/shared/baseWeights';
import { comparisonView } from '../../src/shared/comparisonModel';
import { configDifferences } from '../../src/shared/configDiff';
import { healthRows } from '../../src/shared/health/healthView';
import { chartSummary, emptyReason, PANELS, panelLines, phaseBars, phaseEmptyReason, pointLabel, runLabels } from '../../src/shared/dashboardModel';
import { findingView, healthFindings, type FindingView } from '../../src/shared/health/findings';
import { drillView } from '../../src/shared/drillModel';
import {
  groupRows,
  inspectorHeader,
  outcomeDetails,
  rescoreView,
  tokenDetails,
  tokenDetailsTitle,
  tokenPieces,
  tokenSummary,
} from '../../src/shared/inspectorModel';
import { remoteWorst, sortWorst, trajectoryWorst, type WorstTable } from '../../src/shared/worstTable';
import { tokenRows } from '../../src/shared/tokenStatsRows';
import type { FoundModel } from '../../src/shared/foundModel';
import type { BackendMethods, TrajectoryDetail, TrajectorySummary, WorstToken } from '../../src/shared/protocol/backendProtocol';
import type { RunSeries } from '../../src/shared/protocol/webviewProtocol';
import type { RescoreReport } from '../../src/shared/rescore';
import { ConfigError, validateRunConfig } from '../../src/shared/runConfig';
import type { IterationMetrics, RunSummary } from '../../src/shared/types';

export type OutputKind = 'text' | 'line' | 'message' | 'markdown';

export interface Rendered {
  readonly where: string;
  readonly kind: OutputKind;
  readonly text: string;
}

/** What the host has of one run when it draws it (from the backend's handlers). */
export interface ViewInput {
  readonly runs: readonly RunSummary[];
  readonly run: NonNullable<BackendMethods['getRun']['result']>;
  readonly iterations: readonly IterationMetrics[];
  /** The first iteration's trajectories. */
  readonly trajectories: readonly TrajectorySummary[];
  /** Its first trajectory, whole. */
  readonly trajectory: TrajectoryDetail;
  /** Models found on the machine (Start Run's model step). */
  readonly found: readonly FoundModel[];
  /** A folder of dumps being imported, its companions, a malformed line's file. */
  readonly importDir: string;
  readonly importFound: { readonly validationDir?: string; readonly configFile?: string };
  readonly importFile: string;
  /** The newest stored re-score of its first trajectory (none for an imported run, which cannot be re-scored). */
  readonly rescore: RescoreReport | null;
}

export interface Renderer {
  /** `src/…/module.ts#export`. */
  readonly id: string;
  readonly render: (v: ViewInput) => Rendered[];
}

const out = (where: string, kind: OutputKind, text: string): Rendered => ({ where, kind, text });

/** A tree item's parts: label and description are lines, a plain tooltip text, tooltipMarkdown Markdown. */
function parts(where: string, p: ItemParts): Rendered[] {
  return [
    out(`${where} label`, 'line', p.label),
    ...(p.description !== undefined ? [out(`${where} description`, 'line', p.description)] : []),
    ...(p.tooltip !== undefined ? [out(`${where} tooltip`, 'text', p.tooltip)] : []),
    ...(p.tooltipMarkdown !== undefined ? [out(`${where} tooltip`, 'markdown', p.tooltipMarkdown)] : []),
  ];
}

function pick(where: string, items: readonly PickItem[]): Rendered[] {
  return items.flatMap((it, i) => [
    out(`${where} item ${i} label`, 'message', it.label),
    ...(it.description !== undefined ? [out(`${where} item ${i} description`, 'message', it.description)] : []),
    ...(it.detail !== undefined ? [out(`${where} item ${i} detail`, 'message', it.detail)] : []),
  ]);
}

function liveView(v: ViewInput): LiveRunView {
  const s = v.run.summary;
  return {
    name: s.name,
    method: s.method,
    iterations: s.iterationsPlanned,
    runId: s.id,
    phase: { kind: 'iteration', iteration: 1 },
    progress: { type: 'progress', runId: s.id, iteration: 1, iterations: s.iterationsPlanned, rewardMean: 0.5, successRate: 0.5, etaMs: 5000, loss: 0.1 },
  };
}

const series = (v: ViewInput): RunSeries[] => [{ run: v.run.summary, iterations: [...v.iterations], evaluations: v.run.evaluations, findings: findingsOf(v) }];

/**
 * Health findings that quote stored text, through the real detectors: a tool named like the stored run
 * (the payload) whose calls start failing, as a workspace tool's name from a repository would.
 */
function findingsOf(v: ViewInput): FindingView[] {
  const name = v.run.summary.name;
  const its = Array.from({ length: 6 }, (_, i) => ({
    ...v.iterations[0]!,
    iteration: i + 1,
    toolHealth: { [name]: { calls: 10, callsPerEpisode: 1, errorRate: i < 3 ? 0 : 0.9, timeoutRate: 0 } },
  }));
  return healthFindings(its).map((f) => ({ ...findingView(f), episodes: [v.trajectory.id] }));
}

const stored = (v: ViewInput): Record<string, unknown> => v.run.config as Record<string, unknown>;

/** A stored error, or the run's name where it has none (the matrix plants both). */
const storedError = (v: ViewInput): string => v.run.summary.error ?? v.run.summary.name;

/** The shown trajectory's generated tokens, as the inspector's heat map reads them. */
const tokensOf = (v: ViewInput): { rows: ReturnType<typeof tokenRows>; pieces: string[] } => {
  const rows = tokenRows(v.trajectory.turnList, v.trajectory.tokenStats);
  return { rows, pieces: tokenPieces(v.trajectory, rows) };
};

/** The shown trajectory's tokens as the worst tokens of its iteration (what the host sends the inspector and the drill-down). */
const worstOf = (v: ViewInput): WorstToken[] =>
  tokensOf(v).rows.map((r) => ({
    ...r,
    trajectoryId: v.trajectory.id,
    iteration: v.trajectory.iteration,
    advantage: v.trajectory.advantage,
    by: 'mismatch',
    value: 0,
  }));

/** A worst-token table's title, note and cells (one line each) and its cells' hovers. */
function worstTable(where: string, t: WorstTable | undefined): Rendered[] {
  if (!t) return [];
  return [
    out(`${where} title`, 'line', t.title),
    ...(t.note !== undefined ? [out(`${where} note`, 'line', t.note)] : []),
    ...t.rows.flatMap((r, i) =>
      r.cells.flatMap((c) => [out(`${where} row ${i} ${c.key}`, 'line', c.text), out(`${where} row ${i} ${c.key} hover`, 'text', c.title)]),
    ),
  ];
}

export const RENDERERS: readonly Renderer[] = [
  { id: 'src/host/views/treeModel.ts#describeRun', render: (v) => v.runs.map((r) => out(`run ${r.id} description`, 'line', describeRun(r))) },
  { id: 'src/host/views/treeModel.ts#runParts', render: (v) => v.runs.flatMap((r) => parts(`run ${r.id}`, runParts(r, findingsOf(v)))) },
  {
    id: 'src/host/views/treeModel.ts#healthBadge',
    render: (v) => {
      const b = healthBadge(findingsOf(v));
      return b ? [out('run health badge', 'line', b.text), out('run health tooltip', 'text', b.tooltip)] : [out('run health badge', 'line', 'none')];
    },
  },
  {
    id: 'src/host/commands/runMessages.ts#findingMessage',
    render: (v) => findingsOf(v).map((f, i) => out(`live finding ${i}`, 'message', findingMessage(v.run.summary.name, f))),
  },
  {
    id: 'src/shared/health/healthView.ts#healthRows',
    render: (v) =>
      healthRows(series(v)).flatMap((r, i) => [
        out(`health row ${i} head`, 'line', `${r.severity} · ${r.id} · ${r.iterations}${r.run}`),
        out(`health row ${i} summary`, 'line', r.summary),
      ]),
  },
  { id: 'src/host/views/treeModel.ts#iterationParts', render: (v) => v.iterations.flatMap((m, i) => parts(`iteration ${i}`, iterationParts(m))) },
  {
    id: 'src/host/views/treeModel.ts#groupParts',
    render: (v) => groupTrajectories(v.trajectories).flatMap((g) => parts(`group ${g.group}`, groupParts(g.group, g.trajectories))),
  },
  { id: 'src/host/views/treeModel.ts#trajectoryParts', render: (v) => v.trajectories.flatMap((t) => parts(`trajectory ${t.id}`, trajectoryParts(t))) },
  {
    id: 'src/host/views/treeModel.ts#turnParts',
    render: (v) =>
      v.trajectory.turnList.flatMap((t) =>
        parts(`turn ${t.index}`, turnParts({ trajectoryId: v.trajectory.id, index: t.index, action: t.actionText, observation: t.observationText }, 10_000)),
      ),
  },
  {
    id: 'src/host/views/treeModel.ts#messageParts',
    render: (v) => parts('message row', messageParts(`Could not load: ${v.run.summary.error ?? v.run.summary.name}`)),
  },
  {
    id: 'src/host/commands/runMessages.ts#configProblemMessage',
    render: (v) => {
      let issues: ConfigError['issues'] = [];
      try {
        validateRunConfig(stored(v));
      } catch (e) {
        if (e instanceof ConfigError) issues = e.issues;
        else throw e;
      }
      return [out('Start Run: config problem', 'message', configProblemMessage(`${v.run.summary.name}.agentrl.json`, issues))];
    },
  },
  {
    id: 'src/host/commands/runMessages.ts#outcomeMessage',
    render: (v) => [
      out('run failed', 'message', outcomeMessage(v.run.summary.name, { kind: 'failed', reason: v.run.summary.error ?? v.run.summary.name })),
      out('run finished', 'message', outcomeMessage(v.run.summary.name, { kind: 'finished', runId: v.run.summary.id, status: v.run.summary.status })),
      out(
        'run finished with findings',
        'message',
        outcomeMessage(v.run.summary.name, { kind: 'finished', runId: v.run.summary.id, status: v.run.summary.status, findings: findingsOf(v) }),
      ),
    ],
  },
  {
    id: 'src/host/commands/runMessages.ts#sandboxQuestion',
    render: (v) => [
      out(
        'Start Run: sandbox question',
        'message',
        sandboxQuestion(`${v.run.summary.name}.agentrl.json`, sandboxOverrides(stored(v).envOptions, { python: '', sandbox: 'strict' })),
      ),
    ],
  },
  {
    // Resume Run / Fork Run of a stored judged run: the stored address and variable, read as data
    id: 'src/host/commands/judgeGate.ts#judgeGate',
    render: (v) => {
      const config = { ...stored(v), reward: { judge: { baseUrl: v.run.summary.name, apiKeyEnv: storedError(v), model: 'm', rubric: 'r' } } };
      const source = `run ${v.run.summary.id} (${v.run.summary.name})`;
      const refused = judgeGate(config, false, source, 'resume it again');
      const asked = judgeGate(config, true, source, 'resume it again');
      return [
        out('Resume Run: judge refused', 'message', refused.kind === 'refuse' ? refused.message : refused.kind),
        ...(asked.kind === 'ask'
          ? [out('Resume Run: judge question', 'message', asked.question), out('Resume Run: judge detail', 'message', asked.detail)]
          : []),
      ];
    },
  },
  {
    id: 'src/host/commands/trajectoryMarkdown.ts#renderTrajectory',
    render: (v) => [out('trajectory document', 'markdown', renderTrajectory(v.trajectory, { maxTextLength: 10_000, runName: v.run.summary.name }))],
  },
  {
    id: 'src/host/commands/rescoreMarkdown.ts#renderRescore',
    render: (v) => (v.rescore ? [out('re-score document', 'markdown', renderRescore(v.rescore, v.run.summary.name))] : []),
  },
  {
    id: 'src/host/commands/importMessages.ts#importPickTitle',
    render: (v) => [out('Import quick pick title', 'message', importPickTitle(v.importDir))],
  },
  { id: 'src/host/commands/importMessages.ts#importProgressTitle', render: (v) => [out('Import progress title', 'message', importProgressTitle(v.importDir))] },
  {
    id: 'src/host/commands/importMessages.ts#importStartLine',
    render: (v) => [out('Import output line', 'text', importStartLine(v.importDir, v.importFound, '/db/runs.sqlite'))],
  },
  {
    id: 'src/host/commands/importMessages.ts#malformedLine',
    render: (v) => [
      out(
        'Import malformed line',
        'text',
        malformedLine({ type: 'malformed', file: v.importFile, line: 3, reason: v.run.summary.error ?? v.run.summary.name }),
      ),
    ],
  },
  {
    id: 'src/host/commands/importMessages.ts#importFinishedMessage',
    render: (v) => [
      out(
        'Import finished',
        'message',
        importFinishedMessage({ type: 'finished', runId: v.run.summary.id, steps: 2, trajectories: v.trajectories.length, malformed: 1 }, 1),
      ),
    ],
  },
  {
    id: 'src/host/commands/importMessages.ts#importFailedMessage',
    render: (v) => [out('Import failed', 'message', importFailedMessage(v.run.summary.error ?? v.run.summary.name))],
  },
  {
    id: 'src/host/commands/importMessages.ts#importErrorLine',
    render: (v) => [out('Import error line', 'text', importErrorLine(v.run.summary.error ?? v.run.summary.name))],
  },
  { id: 'src/host/statusText.ts#statusText', render: (v) => [out('status bar', 'message', statusText(liveView(v)))] },
  { id: 'src/host/statusText.ts#runLabel', render: (v) => [out('progress notification title', 'message', runLabel(liveView(v)))] },
  { id: 'src/host/statusText.ts#activityText', render: (v) => [out('progress notification', 'message', activityText(liveView(v)))] },
  { id: 'src/host/statusText.ts#activityTooltip', render: (v) => [out('status bar tooltip', 'message', activityTooltip(liveView(v)))] },
  {
    id: 'src/host/statusText.ts#endedText',
    render: (v) => {
      const e = endedText(liveView(v), v.run.summary.status);
      return [out('status bar (ended)', 'message', e.text), out('status bar tooltip (ended)', 'message', e.tooltip)];
    },
  },
  {
    id: 'src/host/replay/replayModel.ts#decorationText',
    render: (v) =>
      v.trajectory.turnList.flatMap((_, i) => {
        const obs = inlineObservation(v.trajectory.turnList, i);
        return obs ? [out(`replay decoration turn ${i}`, 'line', decorationText(obs))] : [];
      }),
  },
  {
    id: 'src/host/replay/replayModel.ts#observationHover',
    render: (v) =>
      v.trajectory.turnList.flatMap((_, i) => {
        const obs = inlineObservation(v.trajectory.turnList, i);
        return obs ? [out(`replay hover turn ${i}`, 'markdown', observationHover(i, obs.full, 10_000))] : [];
      }),
  },
  {
    id: 'src/host/replay/replayModel.ts#rerunMessage',
    render: (v) => v.trajectory.turnList.map((t, i) => out(`re-run notification turn ${i}`, 'message', rerunMessage(i, rerunResult(v, t)))),
  },
  {
    id: 'src/host/replay/replayModel.ts#rerunOutput',
    render: (v) =>
      v.trajectory.turnList.flatMap((t, i) =>
        rerunOutput(v.trajectory.id, i, rerunResult(v, t)).map((l, j) => out(`re-run output turn ${i} line ${j}`, 'text', l)),
      ),
  },
  {
    id: 'src/host/replay/replayModel.ts#resendMessage',
    render: (v) => v.trajectory.turnList.map((t, i) => out(`resend notification turn ${i}`, 'message', resendMessage(resendResult(v, t, i)))),
  },
  {
    id: 'src/host/replay/replayModel.ts#resendOutput',
    render: (v) =>
      v.trajectory.turnList.flatMap((t, i) => resendOutput(resendResult(v, t, i)).map((l, j) => out(`resend output turn ${i} line ${j}`, 'text', l))),
  },
  { id: 'src/host/pickItems.ts#compareRunItems', render: (v) => pick('Compare Runs', compareRunItems(v.runs, [])) },
  { id: 'src/host/pickItems.ts#exportRunItems', render: (v) => pick('Export Run', exportRunItems(v.runs)) },
  { id: 'src/host/pickItems.ts#modelItems', render: (v) => pick('Start Run model step', modelItems(v.found)) },
  {
    id: 'src/host/pickItems.ts#failedEpisodeItems',
    render: (v) => pick('Replay Episode without a tree row', failedEpisodeItems(v.runs.map((run) => ({ run, trajectory: v.trajectory })))),
  },
  {
    id: 'src/shared/dashboardModel.ts#runLabels',
    render: (v) =>
      series(v).flatMap((s) => {
        const l = runLabels(s);
        return [out('legend', 'line', l.short), out('legend hover', 'text', l.full)];
      }),
  },
  {
    id: 'src/shared/dashboardModel.ts#panelLines',
    render: (v) =>
      PANELS.flatMap((p) => {
        const lines = panelLines(p, series(v));
        return [
          ...lines.flatMap((l) => [out(`${p.id} legend`, 'line', l.label), out(`${p.id} legend hover`, 'text', l.fullLabel)]),
          ...(emptyReason(p, series(v), lines.length) !== undefined ? [out(`${p.id} empty reason`, 'text', emptyReason(p, series(v), lines.length)!)] : []),
        ];
      }),
  },
  {
    id: 'src/shared/dashboardModel.ts#chartSummary',
    render: (v) =>
      PANELS.map((p) => {
        const lines = panelLines(p, series(v));
        return out(`${p.id} chart in words (aria-label)`, 'text', chartSummary(p, lines, emptyReason(p, series(v), lines.length)));
      }),
  },
  {
    id: 'src/shared/dashboardModel.ts#pointLabel',
    render: (v) => PANELS.flatMap((p) => panelLines(p, series(v)).map((l) => out(`${p.id} point hover`, 'text', pointLabel(l.label, 1)))),
  },
  {
    id: 'src/shared/dashboardModel.ts#phaseBars',
    render: (v) => {
      const bars = phaseBars(series(v));
      const why = phaseEmptyReason(series(v), bars.length);
      return [
        ...bars.flatMap((b) => [out('phases legend', 'line', b.label), out('phases legend hover', 'text', b.fullLabel)]),
        ...(why !== undefined ? [out('phases empty reason', 'text', why)] : []),
      ];
    },
  },
  // Show Runtime on a run (the output channel) and the dashboard's base-weights line under its picker
  {
    id: 'src/shared/baseWeights.ts#runRuntimeLines',
    render: (v) => runRuntimeLines(v.run.summary.id, v.run.compute, v.run.baseWeights).map((l, i) => out(`Show Runtime on a run, line ${i}`, 'line', l)),
  },
  {
    id: 'src/shared/baseWeights.ts#baseWeightsNote',
    render: (v) => {
      const note = baseWeightsNote([{ run: v.run.summary, baseWeights: v.run.baseWeights }]);
      return note !== undefined ? [out('dashboard base weights', 'line', note)] : [];
    },
  },
  // the webview pages' view models (the pages set their strings with textContent through webview-ui/dom.ts's el())
  {
    id: 'src/shared/inspectorModel.ts#inspectorHeader',
    render: (v) => {
      const h = inspectorHeader(v.trajectory, v.run.compute, v.run.baseWeights);
      return [
        out('inspector task', 'line', h.task),
        ...h.outcome.flatMap((c) => [out(`inspector outcome ${c.key} label`, 'line', c.label), out(`inspector outcome ${c.key}`, 'line', c.value)]),
        out('inspector episode stats', 'line', h.stats),
        ...(h.compute !== undefined ? [out('inspector compute', 'line', h.compute)] : []),
      ];
    },
  },
  {
    id: 'src/shared/inspectorModel.ts#outcomeDetails',
    render: (v) => {
      const d = outcomeDetails(v.trajectory.outcome.details);
      if (!d) return [];
      return [
        ...d.rows.flatMap((r, i) => [out(`outcome detail ${i} key`, 'line', r.label), out(`outcome detail ${i}`, 'text', r.value)]),
        ...(d.otherExtras !== undefined ? [out('outcome other extras', 'text', d.otherExtras)] : []),
      ];
    },
  },
  {
    id: 'src/shared/inspectorModel.ts#groupRows',
    render: (v) => groupRows(v.trajectory.id, [...v.trajectories]).map((g) => out(`group sibling ${g.id}`, 'line', g.text)),
  },
  {
    id: 'src/shared/inspectorModel.ts#tokenSummary',
    render: (v) =>
      tokenSummary(v.trajectory, tokensOf(v).rows).flatMap((c) => [
        out(`token summary ${c.key} label`, 'line', c.label),
        out(`token summary ${c.key}`, 'line', c.value),
      ]),
  },
  { id: 'src/shared/inspectorModel.ts#tokenPieces', render: (v) => tokensOf(v).pieces.map((p, i) => out(`token ${i}`, 'text', p)) },
  {
    id: 'src/shared/inspectorModel.ts#tokenDetails',
    render: (v) => {
      const { rows, pieces } = tokensOf(v);
      return rows.flatMap((r, i) => tokenDetails(r, pieces[i]!, v.trajectory.advantage).map((d) => out(`token ${i} ${d.key}`, 'line', d.value)));
    },
  },
  {
    id: 'src/shared/inspectorModel.ts#tokenDetailsTitle',
    render: (v) => {
      const { rows, pieces } = tokensOf(v);
      return rows.map((r, i) => out(`token ${i} hover`, 'text', tokenDetailsTitle(tokenDetails(r, pieces[i]!, v.trajectory.advantage))));
    },
  },
  {
    id: 'src/shared/inspectorModel.ts#trajectoryWorst',
    render: (v) => {
      const { rows, pieces } = tokensOf(v);
      return (['mismatch', 'logRatio', 'kl'] as const).flatMap((by) => worstTable(`worst by ${by}`, trajectoryWorst(v.trajectory, rows, pieces, by)));
    },
  },
  {
    id: 'src/shared/inspectorModel.ts#remoteWorst',
    render: (v) => [
      ...worstTable('worst of the run', remoteWorst(v.trajectory.iteration, 'run', 'kl', worstOf(v))),
      ...worstTable('worst of the run (error)', remoteWorst(v.trajectory.iteration, 'run', 'kl', [], storedError(v))),
    ],
  },
  {
    id: 'src/shared/inspectorModel.ts#sortWorst',
    render: (v) => {
      const { rows, pieces } = tokensOf(v);
      const table = trajectoryWorst(v.trajectory, rows, pieces, 'mismatch');
      return [
        ...worstTable('worst sorted by token', table && sortWorst(table, 'token', 'ascending')),
        ...worstTable('worst of the run sorted by clip', sortWorst(remoteWorst(v.trajectory.iteration, 'run', 'kl', worstOf(v)), 'clip', 'descending')),
      ];
    },
  },
  {
    id: 'src/shared/inspectorModel.ts#rescoreView',
    render: (v) => {
      const stored = v.rescore?.items.find((i) => i.trajectoryId === v.trajectory.id);
      const view = rescoreView(
        {
          rescores: v.rescore
            ? [
                {
                  rescoreId: v.rescore.id,
                  reward: v.rescore.reward,
                  createdAt: v.rescore.createdAt,
                  score: stored?.new ?? null,
                  error: stored?.error ?? storedError(v),
                },
              ]
            : [],
          edits: [
            {
              id: 1,
              trajectoryId: v.trajectory.id,
              turnIndex: 0,
              actionText: v.trajectory.turnList[0]?.actionText ?? '',
              reward: { file: null, sha256: null, label: v.run.summary.name },
              score: null,
              error: storedError(v),
              createdAt: v.run.summary.createdAt,
            },
          ],
        },
        v.trajectory,
      );
      return [
        ...(view
          ? [
              out('re-scores title', 'line', view.title),
              ...view.rescores.map((x) => out(`re-score ${x.id}`, 'line', x.text)),
              ...view.edits.flatMap((e) => [out(`edit ${e.id} score`, 'line', e.score), out(`edit ${e.id} text`, 'text', e.text)]),
            ]
          : []),
      ];
    },
  },
  {
    id: 'src/shared/drillModel.ts#drillView',
    render: (v) => {
      const d = drillView(
        {
          type: 'drill',
          runId: v.run.summary.id,
          iteration: v.trajectory.iteration,
          by: 'mismatch',
          items: worstOf(v),
          histogram: { edges: [0, 0.5, 1], counts: [3, 1], tokens: 4, unknown: 1 },
          ...(typeof v.run.summary.error === 'string' ? { error: v.run.summary.error } : {}),
        },
        v.run.summary.name,
      );
      return [
        out('drill-down title', 'line', d.title),
        ...(d.empty !== undefined ? [out('drill-down empty', 'line', d.empty)] : []),
        ...worstTable('drill-down', d.table),
        out('drill-down histogram', 'line', d.histogram.meta),
      ];
    },
  },
  {
    id: 'src/shared/comparisonModel.ts#comparisonView',
    render: (v) => {
      const c = comparisonView({
        type: 'comparison',
        runs: [v.run.summary, v.run.summary],
        differences: configDifferences([v.run.config, {}]),
        sharedTasks: v.trajectories.map((t) => ({
          taskId: t.taskId,
          runs: [{ runId: v.run.summary.id, episodes: 1, rewardMean: t.reward, successRate: 1, trajectoryId: t.id }],
        })),
      });
      return [
        ...c.runs.flatMap((r, i) => [out(`Compare Runs run ${i}`, 'line', r.text), out(`Compare Runs run ${i} hover`, 'text', r.title)]),
        // a section's heading with each of its rows (a key with a dot in it makes a section of its own: the count of rows stays)
        ...c.differences.sections.flatMap((s) =>
          s.rows.flatMap((r) => [
            out('Compare Runs section', 'line', s.title),
            out('Compare Runs key', 'line', r.key),
            out('Compare Runs key hover', 'text', r.title),
            ...r.values.map((x) => out('Compare Runs value', 'line', x)),
          ]),
        ),
        ...c.tasks.rows.flatMap((t) => [
          out('Compare Runs task', 'line', t.task),
          out('Compare Runs task hover', 'text', t.title),
          ...t.cells.map((x) => out('Compare Runs cell', 'line', x.text)),
        ]),
      ];
    },
  },
];

/** A stored request sent again: the turn's stored texts as the answer, its task id as a tool and the checkpoint's folder. */
function resendResult(v: ViewInput, t: TrajectoryDetail['turnList'][number], turn: number): ResendResult {
  return {
    runId: v.trajectory.runId,
    trajectoryId: v.trajectory.id,
    turn,
    checkpoint: `/tmp/${v.trajectory.taskId}`,
    greedy: false,
    messages: 2,
    tools: [v.trajectory.taskId],
    stored: t.actionText,
    text: t.observationText,
    content: t.observationText,
    toolCalls: [{ name: v.trajectory.taskId, arguments: t.actionText }],
    promptTokens: 1,
    completionTokens: 1,
    finish: 'stop',
  };
}

function rerunResult(v: ViewInput, t: TrajectoryDetail['turnList'][number]): BackendMethods['rerun']['result'] {
  const envOptions = stored(v).envOptions;
  const o = typeof envOptions === 'object' && envOptions !== null ? (envOptions as Record<string, unknown>) : {};
  const used = { level: 'strict' as const, python: '/usr/bin/python3' };
  return {
    observationText: t.observationText,
    same: false,
    level: used.level,
    python: used.python,
    notes: rerunNotes({ level: t.observation.level ?? o.sandbox, python: o.python }, used),
  };
}

/** Why Start Run's wizard steps (judge, reasoning-gym) render nothing stored or imported. */
const WIZARD_INPUT =
  "Start Run's wizard: checks, configs and messages on what the user typed or picked in this session, shown as plain text by VS Code's input box and notifications (through messageText); no stored or imported text";

/** Exports of pure host modules that render nothing stored or imported, and why. */
export const NOT_RENDERERS: Readonly<Record<string, string>> = {
  'src/host/commands/judgeSteps.ts#judgeUrlProblem': WIZARD_INPUT,
  'src/host/commands/rubricFile.ts#readRubricFile':
    "the file the user picked in Start Run's dialog: its name quoted through messageText, its content never shown",
  'src/host/commands/judgeSteps.ts#judgeModelProblem': WIZARD_INPUT,
  'src/host/commands/judgeSteps.ts#rubricProblem': WIZARD_INPUT,
  'src/host/commands/judgeSteps.ts#rubricFromFile':
    "Start Run's wizard: the rubric file the user picked in this session's open dialog; its workspace-relative name reaches the notification through messageText, its text only the config",
  'src/host/commands/judgeSteps.ts#parseWeight': WIZARD_INPUT,
  'src/host/commands/judgeSteps.ts#judgeRewardSection': WIZARD_INPUT,
  'src/host/commands/judgeSteps.ts#judgeKeyAvailable': 'a yes or no: whether a key is set (never its value)',
  'src/host/commands/judgeSteps.ts#noKeyQuestion': WIZARD_INPUT,
  'src/host/commands/reasoningGymSteps.ts#datasetNameProblem': WIZARD_INPUT,
  'src/host/commands/reasoningGymSteps.ts#reasoningGymEnvOptions': WIZARD_INPUT,
  'src/host/commands/startRunSteps.ts#moduleNameProblem':
    "Start Run's wizard: checks and messages on what the user typed or picked in this session, shown as plain text by VS Code's input box and notifications; no stored or imported text",
  'src/host/commands/startRunSteps.ts#parseEnvArgs':
    "Start Run's wizard: checks and messages on what the user typed or picked in this session, shown as plain text by VS Code's input box and notifications; no stored or imported text",
  'src/host/commands/startRunSteps.ts#openenvUrlProblem':
    "Start Run's wizard: checks and messages on what the user typed or picked in this session, shown as plain text by VS Code's input box and notifications; no stored or imported text",
  'src/host/commands/startRunSteps.ts#modelRunConfig':
    "Start Run's wizard: checks and messages on what the user typed or picked in this session, shown as plain text by VS Code's input box and notifications; no stored or imported text",
  'src/host/commands/startRunSteps.ts#withVerifiersPython':
    "Start Run's wizard: checks and messages on what the user typed or picked in this session, shown as plain text by VS Code's input box and notifications; no stored or imported text",
  'src/host/commands/startRunSteps.ts#teacherRefusedMessage':
    "Start Run's wizard: checks and messages on what the user typed or picked in this session, shown as plain text by VS Code's input box and notifications; no stored or imported text",
  'src/host/commands/startRunSteps.ts#verifiersMissingMessage':
    "Start Run's wizard: checks and messages on what the user typed or picked in this session, shown as plain text by VS Code's input box and notifications; no stored or imported text",
  'src/host/views/treeModel.ts#groupTrajectories': 'groups trajectory records; groupParts renders the groups',
  'src/host/views/treeModel.ts#lineage': 'numbers only (the parent run id and the fork iteration, read as numbers); runParts renders it',
  'src/host/webviews/runComparison.ts#loadComparison':
    'loads the compared runs from the backend; the dashboard page renders them with textContent (webview-ui/comparison.ts)',
  'src/host/statusText.ts#formatEta': 'numbers only',
  'src/host/commands/runMessages.ts#sandboxOverrides': 'parts of the question sandboxQuestion renders',
  'src/host/commands/trajectoryMarkdown.ts#fullTextHint': 'a trajectory id and fixed text',
  'src/host/commands/rescoreMarkdown.ts#differingItems': 'filters re-score records; renderRescore renders them',
  'src/host/replay/replayModel.ts#inlineObservation': 'where an observation goes; decorationText and observationHover render it',
  'src/host/replay/replayModel.ts#codeTurns': 'turn numbers',
  'src/host/webviews/dashboardPage.ts#webviewPage': 'the page shell (script and style URIs, the nonce); data reaches the page only as messages',
  'src/host/processes/runtime.ts#runtimeCandidates': 'the runtimes this machine offers (settings and executables), no stored or imported text',
  'src/host/processes/runtime.ts#describeCandidate':
    "a runtime candidate (the user's own setting or VS Code's executable); shown through showInvisibles and messageText by hostProcesses",
  'src/host/processes/runtime.ts#describeRuntime': 'the chosen runtime (as describeCandidate)',
  'src/host/processes/runtime.ts#probeCandidate': 'runs the probe; its result is described by describeRuntime',
  'src/host/processes/runtime.ts#probeLlamaCpp': 'runs the probe with --llama-cpp; its result is described by describeLlamaCppReport',
  'src/host/processes/runtime.ts#describeLlamaCppReport':
    "what this machine's llama.cpp build says of itself, or why it did not load (no stored or imported text); Show Runtime passes it through messageText and showInvisibles",
  'src/host/processes/runtime.ts#resolveRuntime': 'chooses the runtime',
  'src/host/processes/nodeProcess.ts#forkNode': 'starts a process; its stderr lines reach the output channel through showInvisibles',
  'src/host/processes/nodeProcess.ts#NodeNotFoundError': 'an error class',
  'src/host/processes/backendClient.ts#BackendClient': "the backend's client: moves data, renders none",
  'src/host/processes/backendClient.ts#BackendError': 'an error class',
  'src/host/processes/runManager.ts#RunManager': 'starts run workers; their messages are rendered by statusText and runMessages',
};
