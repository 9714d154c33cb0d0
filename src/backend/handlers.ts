// Query handlers of the backend process, one per BackendMethods entry.
import type Database from 'better-sqlite3';
import * as fs from 'node:fs';
import type { BackendMethod, BackendMethods } from '../shared/protocol/backendProtocol';
import { codeOf } from '../shared/linking';
import { collapseText, toolCollapses } from '../shared/toolHealth';
import { RunReader } from '../store/runReader';
import { TokenStatsReader } from '../store/tokenStatsReader';
import { deleteRun, markOrphanedRuns, markRunFailed } from '../store/runWriter';
import { findModels } from '../rl/policies/hf/modelCache';
import type { SandboxPools } from '../rl/sandbox/sandboxPools';
import { rerunTurn } from './rerun';
import { RunTokenizers } from './runTokenizer';

export type Handlers = { [M in BackendMethod]: (p: BackendMethods[M]['params']) => BackendMethods[M]['result'] | Promise<BackendMethods[M]['result']> };

const MAX_PAGE = 1000;
const page = (limit: number): number => Math.max(1, Math.min(MAX_PAGE, Math.floor(limit)));

/** `pools`: where re-runs execute (the backend's own warm interpreters). */
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
      return d
        ? { summary: d.summary, config: d.config, evaluations: d.evaluations, compute: typeof d.runtime.compute === 'string' ? d.runtime.compute : '' }
        : null;
    },
    iterations: ({ runId, offset, limit }) => reader.iterationsPage(runId, Math.max(0, offset), page(limit)),
    trajectories: ({ runId, iteration, offset, limit }) => reader.trajectoriesPage(runId, iteration, Math.max(0, offset), page(limit)),
    trajectory: ({ trajectoryId }) => {
      const t = reader.trajectory(trajectoryId);
      if (!t) return null;
      const stats = tokens.stats(trajectoryId);
      const pieces = tokenizers.pieces(t.runId, reader.config(t.runId), t.turnList);
      return { ...t, ...(stats ? { tokenStats: stats } : {}), ...(pieces ? { pieces } : {}) };
    },
    markFailed: ({ runId, reason }) => markRunFailed(db, runId, reason),
    deleteRun: ({ runId }) => deleteRun(db, runId),
    exportRun: ({ runId, file }) => {
      const d = reader.detail(runId);
      if (!d) throw new Error(`no run ${runId} in the database`);
      const text = `${JSON.stringify({ runId, name: d.summary.name, status: d.summary.status, database: db.name, config: d.config, runtime: d.runtime, iterations: d.iterations, evaluations: d.evaluations, wallMs: d.wallMs, warnings: toolCollapses(d.iterations).map(collapseText) }, null, 2)}\n`;
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
        runId,
        ...(typeof iteration === 'number' ? { iteration } : {}),
        ...(typeof trajectoryId === 'number' ? { trajectoryId } : {}),
        by: by === 'logRatio' || by === 'kl' ? by : 'mismatch',
        limit: Math.max(1, Math.min(200, Math.floor(limit))),
      }),
    mismatchHistogram: ({ runId, iteration, bins }) => tokens.mismatchHistogram(runId, iteration, Math.max(2, Math.min(100, Math.floor(bins)))),
    sharedTasks: ({ runIds, limit }) =>
      reader.sharedTasks((Array.isArray(runIds) ? runIds : []).filter((id): id is number => Number.isInteger(id)).slice(0, 20), page(limit)),
    listModels: ({ folders }) =>
      findModels({ folders: (Array.isArray(folders) ? folders : []).filter((f): f is string => typeof f === 'string' && f !== ''), backend: 'wasm' }),
  };
}
