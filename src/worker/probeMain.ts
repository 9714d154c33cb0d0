// The runtime probe (dist/probe.js): forked by the VS Code host on a candidate runtime before any worker
// or backend runs there. It checks, in order, what our processes need: the runtime's versions (a Node
// older than the floor would crash in better-sqlite3, so it is never loaded there), better-sqlite3
// loads, a WAL round trip (one connection writes in a transaction, a second one reads it back), and
// tfjs-backend-wasm computes a product correctly. It names each stage before entering it, so a crash is
// attributed, and ends with one report. `node dist/probe.js --json` prints the report instead.
// `--llama-cpp` (Show Runtime): only whether llama.cpp, the native rollout engine, loads here and which
// build (CPU, Metal, CUDA, Vulkan); a separate fork, so that it never holds up or fails the runtime's check.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runtimeTooOld } from '../shared/nodeFloor';
import type { LlamaCppReport, ProbeReport, ProbeStage, ProbeToHost } from '../shared/protocol/probeProtocol';

/** Resolves once the message is written to the IPC channel: a stage named before a crash still arrives. */
const say = (m: ProbeToHost): Promise<void> =>
  new Promise((resolve) => {
    if (!process.send) resolve();
    else process.send(m, () => resolve());
  });

function walRoundTrip(): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Database = require('better-sqlite3') as typeof import('better-sqlite3');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-probe-'));
  const file = path.join(dir, 'probe.sqlite');
  try {
    const writer = new Database(file);
    const reader = new Database(file);
    try {
      const mode = writer.pragma('journal_mode = WAL', { simple: true }) as string;
      if (mode !== 'wal') throw new Error(`journal_mode is "${mode}" after asking for WAL (the folder ${dir} may not support shared memory)`);
      writer.exec('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)');
      writer.transaction(() => writer.prepare('INSERT INTO t (k, v) VALUES (?, ?)').run(1, 'written'))();
      const row = reader.prepare('SELECT v FROM t WHERE k = 1').get() as { v: string } | undefined;
      if (row?.v !== 'written') throw new Error('a second connection did not read what the first one committed');
      return (reader.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
    } finally {
      reader.close();
      writer.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function wasmProduct(): Promise<boolean> {
  // loaded only now: the versions and SQLite stages come first and must not wait for tfjs
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { initBackend } = require('../rl/policies/lm/models/tfjsBackend') as typeof import('../rl/policies/lm/models/tfjsBackend');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const tf = require('@tensorflow/tfjs') as typeof import('@tensorflow/tfjs');
  await initBackend('wasm');
  const product = tf.matMul(tf.tensor2d([1, 2, 3, 4], [2, 2]), tf.tensor2d([5, 6, 7, 8], [2, 2]));
  const got = Array.from(await product.data());
  if (got.join(',') !== '19,22,43,50') throw new Error(`a 2×2 product came out as [${got.join(', ')}] instead of [19, 22, 43, 50]`);
  return tf.env().getBool('WASM_HAS_SIMD_SUPPORT');
}

async function probe(): Promise<ProbeReport> {
  const v = process.versions;
  const base = {
    node: v.node,
    napi: v.napi ?? '0',
    ...(v.electron ? { electron: v.electron } : {}),
    platform: process.platform,
    arch: process.arch,
    execPath: process.execPath,
  };
  let stage: ProbeStage = 'versions';
  const enter = async (s: ProbeStage): Promise<void> => {
    stage = s;
    await say({ type: 'stage', stage: s });
  };
  let sqlite: string | undefined;
  try {
    await enter('versions');
    const old = runtimeTooOld(v);
    if (old) throw new Error(old);
    await enter('sqlite');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('better-sqlite3');
    await enter('wal');
    sqlite = walRoundTrip();
    await enter('tfjs');
    const wasmSimd = await wasmProduct();
    return { ...base, sqlite, wasmSimd };
  } catch (e) {
    const error = (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '';
    return { ...base, ...(sqlite ? { sqlite } : {}), failed: { stage, error } };
  }
}

async function llamaCppReport(): Promise<LlamaCppReport> {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { describeLlamaCpp } = require('../rl/policies/lm/rolloutEngines/llamaCpp') as typeof import('../rl/policies/lm/rolloutEngines/llamaCpp');
    return await describeLlamaCpp();
  } catch (e) {
    return { problem: `llama.cpp did not load (${(e instanceof Error ? e.message : String(e)).split('\n')[0]})` };
  }
}

if (process.argv.includes('--llama-cpp'))
  void llamaCppReport().then(async (report) => {
    if (process.send) await say({ type: 'llamaCpp', report });
    else process.stdout.write(`${JSON.stringify(report)}\n`);
    process.exit(0);
  });
else
  void probe().then(async (report) => {
    if (process.send) {
      await say({ type: 'report', report });
      process.exit(0);
    } else {
      process.stdout.write(`${JSON.stringify(report)}\n`);
      process.exit(report.failed ? 1 : 0);
    }
  });
