// Query handlers of the backend process, one per BackendMethods entry.
import type Database from 'better-sqlite3';
import * as fs from 'node:fs';
import { storedBaseWeights } from '../shared/baseWeights';
import type { BackendMethod, BackendMethods } from '../shared/protocol/backendProtocol';
import { findingRecord, findingView } from '../shared/health/findings';
import { codeOf } from '../shared/linking';
import { collapseText, toolCollapses } from '../shared/toolHealth';
import { RunReader } from '../store/runReader';
import { TokenStatsReader } from '../store/tokenStatsReader';
import { deleteRun, markOrphanedRuns, markRunFailed } from '../store/runWriter';
import { findModels } from '../rl/policies/lm/models/modelCache';
import type { SandboxPools } from '../rl/sandbox/sandboxPools';
import { rerunTurn } from './rerun';
import { RunTokenizers } from './runTokenizer';
import { rescoreReport, trajectoryRescores } from '../store/rescoreStore';
import { editFinalAnswer, rescoreRun } from '../store/rescoreRun';
import { resendRequest } from '../store/resendRequest';
import { teacherProblem, verifiersCheck } from './startChecks';

export type Handlers = { [M in BackendMethod]: (p: BackendMethods[M]['params']) => BackendMethods[M]['result'] | Promise<BackendMethods[M]['result']> };

const MAX_PAGE = 1000;
const page = (limit: number): number => Math.max(1, Math.min(MAX_PAGE, Math.floor(limit)));

/** `pools`: where re-runs execute (the backend's own warm interpreters). */
/** A request's value checked as the type it declares (the host is the other side of a process boundary). */
function checked<T>(value: unknown, ok: (v: unknown) => boolean, field: string): T {
  if (!ok(value)) throw new Error(`malformed request: ${field} is ${JSON.stringify(value)?.slice(0, 80) ?? 'missing'}`);
  return value as T;
}
const isFolders = (v: unknown): boolean => Array.isArray(v) && v.length <= 100 && v.every((f) => typeof f === 'string' && f !== '');
const isId = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v > 0;
const isText = (v: unknown): boolean => typeof v === 'string';
const isPath = (v: unknown): boolean => typeof v === 'string' && v !== '';
const orNull = (ok: (v: unknown) => boolean) => (v: unknown) => v === null || ok(v);

export function handlers(db: Database.Database, pools: SandboxPools): Handlers {
  const reader = new RunReader(db);
  const tokens = new TokenStatsReader(db);
  const tokenizers = new RunTokenizers();
  return {
    listRuns: () => {
      markOrphanedRuns(db);
      return reader.listRuns();
    },
    getRun: ({ runId }) => {
      const d = reader.detail(runId);
      if (!d) return null;
      const baseWeights = storedBaseWeights(d.runtime);
      return {
        summary: d.summary,
        config: d.config,
        evaluations: d.evaluations,
        compute: typeof d.runtime.compute === 'string' ? d.runtime.compute : '',
        ...(baseWeights ? { baseWeights } : {}),
      };
    },
    iterations: ({ runId, offset, limit }) => reader.iterationsPage(runId, Math.max(0, offset), page(limit)),
    findings: ({ runIds }) =>
      checked<number[]>(runIds, (v) => Array.isArray(v) && v.length <= 100 && v.every(isId), 'runIds').map((runId) => ({
        runId,
        findings: reader.findings(runId).map((f) => findingView(f)),
      })),
    trajectories: ({ runId, iteration, offset, limit }) => reader.trajectoriesPage(runId, iteration, Math.max(0, offset), page(limit)),
    trajectory: ({ trajectoryId }) => {
      const t = reader.trajectory(trajectoryId);
      if (!t) return null;
      const stats = tokens.stats(trajectoryId);
      const pieces = tokenizers.pieces(t.runId, reader.config(t.runId), t.turnList);
      return { ...t, ...(stats ? { tokenStats: stats } : {}), ...(pieces ? { pieces } : {}) };
    },
    failedCodeEpisodes: ({ limit }) =>
      reader
        .listRuns(Math.max(1, Math.min(100, checked<number>(limit, isId, 'limit'))))
        .map((run) => ({ run, trajectory: reader.latestFailedWithCode(run.id) ?? null })),
    markFailed: ({ runId, reason }) => markRunFailed(db, runId, reason),
    deleteRun: ({ runId }) => deleteRun(db, runId),
    exportRun: ({ runId, file }) => {
      const d = reader.detail(runId);
      if (!d) throw new Error(`no run ${runId} in the database`);
      const text = `${JSON.stringify({ runId, name: d.summary.name, status: d.summary.status, database: db.name, config: d.config, runtime: d.runtime, iterations: d.iterations, evaluations: d.evaluations, wallMs: d.wallMs, warnings: toolCollapses(d.iterations).map(collapseText), findings: reader.findings(runId).map(findingRecord) }, null, 2)}\n`;
      fs.writeFileSync(file, text);
      return { file, bytes: Buffer.byteLength(text) };
    },
    rerun: ({ trajectoryId, turn, python, sandbox }) => {
      const t = reader.trajectory(trajectoryId);
      const recorded = t?.turnList[turn];
      if (!t || !recorded) throw new Error(`no turn ${turn} in trajectory ${trajectoryId}`);
      const code = codeOf(recorded);
      if (code === undefined) throw new Error('this turn ran no code: nothing to re-run');
      // the stored config is data read back (a shared or imported database can hold anything): checked as such
      const config: unknown = reader.detail(t.runId)?.config;
      const c = typeof config === 'object' && config !== null ? (config as { env?: unknown; envOptions?: unknown }) : {};
      const stored = c.env === 'code' && typeof c.envOptions === 'object' && c.envOptions !== null ? (c.envOptions as Record<string, unknown>) : {};
      return rerunTurn(code, { text: recorded.observationText, level: recorded.observation.level }, stored, { python, sandbox }, pools);
    },
    worstTokens: ({ runId, iteration, trajectoryId, by, limit }) =>
      tokens.worst({
        runId: checked<number>(runId, isId, 'runId'),
        ...(iteration !== undefined ? { iteration: checked<number>(iteration, isId, 'iteration') } : {}),
        ...(trajectoryId !== undefined ? { trajectoryId: checked<number>(trajectoryId, isId, 'trajectoryId') } : {}),
        by: by === 'logRatio' || by === 'kl' || by === 'reverseKl' ? by : 'mismatch',
        limit: Math.max(1, Math.min(200, checked<number>(limit, isId, 'limit'))),
      }),
    mismatchHistogram: ({ runId, iteration, bins }) =>
      tokens.mismatchHistogram(
        checked<number>(runId, isId, 'runId'),
        checked<number>(iteration, isId, 'iteration'),
        Math.max(2, Math.min(100, checked<number>(bins, isId, 'bins'))),
      ),
    sharedTasks: ({ runIds, limit }) =>
      reader.sharedTasks((Array.isArray(runIds) ? runIds : []).filter((id): id is number => Number.isInteger(id)).slice(0, 20), page(limit)),
    // re-scores run here, in the backend, never in the extension host: the reward file runs in the sandbox
    rescore: (p) => {
      const trajectoryId = checked<number | null>(p.trajectoryId, orNull(isId), 'trajectoryId');
      const rewardFile = checked<string | null>(p.rewardFile, orNull(isText), 'rewardFile');
      return rescoreRun(db, db.name, {
        run: String(checked<number>(p.runId, isId, 'runId')),
        sandbox: {
          python: checked<string>(p.python, isText, 'python'),
          sandbox: checked<string>(p.sandbox, isText, 'sandbox'),
          folders: checked<string[]>(p.folders, isFolders, 'folders'),
        },
        ...(trajectoryId !== null ? { trajectoryId } : {}),
        ...(rewardFile !== null ? { rewardFile } : {}),
      });
    },
    rescoreReport: ({ rescoreId }) => rescoreReport(db, checked<number>(rescoreId, isId, 'rescoreId')) ?? null,
    editFinalAnswer: (p) => {
      const trajectoryId = checked<number>(p.trajectoryId, isId, 'trajectoryId');
      const t = reader.trajectory(trajectoryId);
      if (!t) throw new Error(`no trajectory ${trajectoryId} in the database`);
      const rewardFile = checked<string | null>(p.rewardFile, orNull(isText), 'rewardFile');
      return editFinalAnswer(db, db.name, {
        run: String(t.runId),
        trajectoryId,
        finalAnswer: checked<string>(p.text, isText, 'text'),
        sandbox: {
          python: checked<string>(p.python, isText, 'python'),
          sandbox: checked<string>(p.sandbox, isText, 'sandbox'),
          folders: checked<string[]>(p.folders, isFolders, 'folders'),
        },
        ...(rewardFile !== null ? { rewardFile } : {}),
      });
    },
    trajectoryRescores: ({ trajectoryId }) => trajectoryRescores(db, checked<number>(trajectoryId, isId, 'trajectoryId')),
    resendRequest: (p) =>
      resendRequest(db, db.name, {
        trajectoryId: checked<number>(p.trajectoryId, isId, 'trajectoryId'),
        turn: checked<number>(p.turn, (v) => typeof v === 'number' && Number.isInteger(v) && v >= 0, 'turn'),
        greedy: checked<boolean>(p.greedy, (v) => typeof v === 'boolean', 'greedy'),
        seed: 1,
      }),
    checkTeacher: (p) => teacherProblem(checked<string>(p.model, isPath, 'model'), checked<string>(p.teacher, isPath, 'teacher')),
    checkVerifiers: (p) => verifiersCheck(checked<string>(p.python, isText, 'python'), checked<string>(p.root, isText, 'root')),
    listModels: ({ folders }) =>
      findModels({ folders: (Array.isArray(folders) ? folders : []).filter((f): f is string => typeof f === 'string' && f !== ''), backend: 'wasm' }),
  };
}
