// Probe → host messages (child_process IPC, JSON). Before the host starts a worker or the backend on a
// runtime, it forks dist/probe.js on it once: the probe names each stage before it enters it (a stage
// that crashes the process, such as a native addon built for another ABI, is then known by name) and
// ends with one report. Forked with `--llama-cpp` it only says which llama.cpp build loads there.
import { isObject as isObj, isString as isStr } from './guards';

/** The stages in order: the runtime's versions, better-sqlite3 loads, a WAL round trip between two connections, tfjs-wasm computes. */
export const PROBE_STAGES = ['versions', 'sqlite', 'wal', 'tfjs'] as const;
export type ProbeStage = (typeof PROBE_STAGES)[number];

export interface ProbeReport {
  /** process.versions of the probed runtime. */
  readonly node: string;
  readonly napi: string;
  readonly electron?: string;
  readonly platform: string;
  readonly arch: string;
  readonly execPath: string;
  /** SQLite's version, once better-sqlite3 loaded. */
  readonly sqlite?: string;
  /** tfjs-backend-wasm started and computed a product correctly; whether it has SIMD. */
  readonly wasmSimd?: boolean;
  /** The first stage that failed and why; absent when every stage passed. */
  readonly failed?: { readonly stage: ProbeStage; readonly error: string };
}

/** `probe.js --llama-cpp`: which llama.cpp build loads on this runtime (the native rollout engine), or why none does. */
export type LlamaCppReport = { readonly build: string } | { readonly problem: string };

export type ProbeToHost =
  | { readonly type: 'stage'; readonly stage: ProbeStage }
  | { readonly type: 'report'; readonly report: ProbeReport }
  | { readonly type: 'llamaCpp'; readonly report: LlamaCppReport };

const isStage = (v: unknown): v is ProbeStage => isStr(v) && (PROBE_STAGES as readonly string[]).includes(v);

function isReport(r: unknown): r is ProbeReport {
  if (!isObj(r)) return false;
  const f = r.failed;
  return (
    ['node', 'napi', 'platform', 'arch', 'execPath'].every((k) => isStr(r[k])) &&
    (r.electron === undefined || isStr(r.electron)) &&
    (r.sqlite === undefined || isStr(r.sqlite)) &&
    (r.wasmSimd === undefined || typeof r.wasmSimd === 'boolean') &&
    (f === undefined || (isObj(f) && isStage(f.stage) && isStr(f.error)))
  );
}

export function isProbeToHost(m: unknown): m is ProbeToHost {
  if (!isObj(m)) return false;
  if (m.type === 'stage') return isStage(m.stage);
  if (m.type === 'llamaCpp') return isObj(m.report) && (isStr(m.report.build) || isStr(m.report.problem));
  return m.type === 'report' && isReport(m.report);
}
