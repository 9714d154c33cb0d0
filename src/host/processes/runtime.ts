// Which runtime our processes (worker, backend, importer) run on, chosen once and probed before use:
//   1. agentRl.nodePath, when set;
//   2. VS Code's own runtime (process.execPath with ELECTRON_RUN_AS_NODE=1, the way vscode-languageclient
//      forks language servers), when its Node-API is 10 or newer (VS Code 1.101+; in code-server and
//      remote hosts process.execPath is a plain Node and the variable is ignored);
//   3. `node` on PATH.
// Each candidate is probed (dist/probe.js: versions, better-sqlite3, a WAL round trip, tfjs-wasm) and
// the first that passes is used. A candidate that fails is reported with the reason and the fix, so a
// user whose agentRl.nodePath points at Node 20 learns why it was passed over.
import { fork } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describeVersions, runtimeTooOld, type RuntimeVersions } from '../../shared/nodeFloor';
import { isProbeToHost, type LlamaCppReport, type ProbeReport, type ProbeStage } from '../../shared/protocol/probeProtocol';

export type RuntimeSource = 'setting' | 'vscode' | 'path';

/** How to start one of our processes: the executable and what to add to its environment. */
export interface ProcessRuntime {
  readonly execPath: string;
  readonly env: Readonly<Record<string, string>>;
}

export interface RuntimeCandidate extends ProcessRuntime {
  readonly source: RuntimeSource;
}

/** A probed runtime that passed. */
export interface Runtime extends RuntimeCandidate {
  readonly report: ProbeReport;
}

export interface RuntimeResolution {
  /** The runtime our processes run on, or undefined when no candidate passed. */
  readonly runtime?: Runtime;
  /** Candidates passed over, each with why and the fix (shown as a warning when a later one was used). */
  readonly rejected: readonly string[];
}

const SOURCE_LABEL: Record<RuntimeSource, string> = {
  setting: 'agentRl.nodePath',
  vscode: 'VS Code’s own runtime',
  path: '`node` on PATH',
};

const FIX: Record<RuntimeSource, string> = {
  setting: 'point agentRl.nodePath at Node.js 22.14 or newer (24 LTS recommended), or clear it to use VS Code’s own runtime',
  vscode: 'update VS Code to 1.101 or newer, or set agentRl.nodePath to Node.js 22.14 or newer',
  path: 'install Node.js 24 (LTS), or set agentRl.nodePath to a Node.js 22.14 or newer',
};

const STAGE_DOING: Record<ProbeStage, string> = {
  versions: 'reading its versions',
  sqlite: 'loading better-sqlite3 (the SQLite engine)',
  wal: 'writing and reading a WAL database from two connections',
  tfjs: 'starting tfjs-backend-wasm',
};

const executable = (p: string): boolean => {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
};

export interface HostFacts {
  /** agentRl.nodePath, trimmed ('' = not set). */
  readonly configured: string;
  /** The extension host's own executable and versions (process.execPath, process.versions). */
  readonly execPath: string;
  readonly versions: RuntimeVersions;
  readonly pathEnv: string;
  readonly platform: NodeJS.Platform;
}

/** The candidates in resolution order, and the ones ruled out without starting anything. */
export function runtimeCandidates(h: HostFacts): { candidates: RuntimeCandidate[]; rejected: string[] } {
  const candidates: RuntimeCandidate[] = [];
  const rejected: string[] = [];
  if (h.configured) {
    if (executable(h.configured)) candidates.push({ source: 'setting', execPath: h.configured, env: {} });
    else rejected.push(`agentRl.nodePath is "${h.configured}", which is not an executable file. Fix: ${FIX.setting}.`);
  }
  const old = runtimeTooOld(h.versions);
  if (old) rejected.push(`${SOURCE_LABEL.vscode} cannot be used: ${old}. Fix: ${FIX.vscode}.`);
  else candidates.push({ source: 'vscode', execPath: h.execPath, env: { ELECTRON_RUN_AS_NODE: '1' } });
  const onPath = h.pathEnv
    .split(path.delimiter)
    .filter((d) => d !== '')
    .map((d) => path.join(d, h.platform === 'win32' ? 'node.exe' : 'node'))
    .find(executable);
  if (onPath && !candidates.some((c) => sameFile(c.execPath, onPath))) candidates.push({ source: 'path', execPath: onPath, env: {} });
  return { candidates, rejected };
}

function sameFile(a: string, b: string): boolean {
  try {
    return fs.realpathSync(a) === fs.realpathSync(b);
  } catch {
    return a === b;
  }
}

/** "VS Code’s own runtime: Node 24.15.0 (Electron 42.3.0) at /…/Code Helper (Plugin)". */
export function describeCandidate(c: RuntimeCandidate, v?: RuntimeVersions): string {
  return `${SOURCE_LABEL[c.source]}${v ? `: ${describeVersions(v)}` : ''} at ${c.execPath}`;
}

/** One line for the output channel, the status bar's tooltip and Show Runtime. */
export function describeRuntime(r: Runtime): string {
  const p = r.report;
  return `${describeCandidate(r, p)} (${p.platform}-${p.arch}, Node-API ${p.napi}) — SQLite ${p.sqlite ?? '?'} with WAL, tfjs wasm${p.wasmSimd ? ' with SIMD' : ' without SIMD'}${p.electron ? '; WebGPU and tfjs-node need a system Node (agentRl.nodePath)' : ''}`;
}

type ProbeOutcome = { readonly report: ProbeReport } | { readonly problem: string };

/** Forks the probe on one candidate and waits for its report (or its crash, attributed to its stage). */
export function probeCandidate(c: RuntimeCandidate, probeScript: string, timeoutMs = 60_000): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    let stage: ProbeStage | undefined;
    let stderr = '';
    let settled = false;
    const done = (o: ProbeOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill();
      resolve(o);
    };
    const child = fork(probeScript, [], {
      execPath: c.execPath,
      execArgv: [],
      env: { ...process.env, ...c.env },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'json',
    });
    const timer = setTimeout(
      () => done({ problem: `${describeCandidate(c)} did not finish its check within ${timeoutMs / 1000} s${stage ? ` (${STAGE_DOING[stage]})` : ''}.` }),
      timeoutMs,
    );
    child.stderr?.on('data', (d: Buffer) => {
      if (stderr.length < 4000) stderr += d.toString();
    });
    child.on('message', (m: unknown) => {
      if (!isProbeToHost(m)) return;
      if (m.type === 'stage') {
        stage = m.stage;
        return;
      }
      if (m.type !== 'report') return;
      const r = m.report;
      if (!r.failed) done({ report: r });
      // a version refusal names the version itself; any later stage names the runtime's version first
      else if (r.failed.stage === 'versions') done({ problem: `${describeCandidate(c)} cannot be used: ${r.failed.error}. Fix: ${FIX[c.source]}.` });
      else done({ problem: `${describeCandidate(c, r)} cannot be used: ${STAGE_DOING[r.failed.stage]} failed: ${r.failed.error}. Fix: ${FIX[c.source]}.` });
    });
    child.on('error', (e) => done({ problem: `${describeCandidate(c)} could not be started (${e.message}). Fix: ${FIX[c.source]}.` }));
    // 'close', not 'exit': by then the IPC channel has delivered the report, if there was one
    child.on('close', (code, signal) => {
      const last = stderr
        .trim()
        .split('\n')
        .filter((l) => l.trim() !== '')
        .pop();
      done({
        problem: `${describeCandidate(c)} cannot be used: its check ${signal ? `crashed (${signal})` : `exited with code ${code}`}${stage ? ` while ${STAGE_DOING[stage]}` : ''}${last ? `: ${last.slice(0, 300)}` : ''}. Fix: ${FIX[c.source]}.`,
      });
    });
  });
}

/** Which llama.cpp build loads on a runtime (`probe.js --llama-cpp` forked there), or why none does. */
export function probeLlamaCpp(r: ProcessRuntime, probeScript: string, timeoutMs = 60_000): Promise<LlamaCppReport> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (report: LlamaCppReport): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill();
      resolve(report);
    };
    const child = fork(probeScript, ['--llama-cpp'], {
      execPath: r.execPath,
      execArgv: [],
      env: { ...process.env, ...r.env },
      stdio: 'ignore',
      serialization: 'json',
    });
    const timer = setTimeout(() => done({ problem: `llama.cpp did not finish loading within ${timeoutMs / 1000} s` }), timeoutMs);
    child.on('message', (m: unknown) => {
      if (isProbeToHost(m) && m.type === 'llamaCpp') done(m.report);
    });
    child.on('error', (e) => done({ problem: `the check could not be started (${e.message})` }));
    child.on('close', (code, signal) => done({ problem: `loading llama.cpp ${signal ? `crashed (${signal})` : `exited with code ${code}`}` }));
  });
}

/** "llama.cpp: CPU build (…)", or "llama.cpp: not here — why and the fix" (Show Runtime). */
export function describeLlamaCppReport(r: LlamaCppReport): string {
  return 'build' in r ? `llama.cpp: ${r.build}` : `llama.cpp not usable here, the wasm engine samples: ${r.problem}`;
}

/** Probes the candidates in order; the first that passes is the runtime. */
export async function resolveRuntime(h: HostFacts, probeScript: string, probe = probeCandidate): Promise<RuntimeResolution> {
  const { candidates, rejected } = runtimeCandidates(h);
  for (const c of candidates) {
    const o = await probe(c, probeScript);
    if ('report' in o) return { runtime: { ...c, report: o.report }, rejected };
    rejected.push(o.problem);
  }
  return { rejected };
}
