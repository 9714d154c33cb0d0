// The checkpoints a user already has: the Hugging Face cache that huggingface-cli, transformers and
// vLLM download into ($HF_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else
// ~/.cache/huggingface/hub: models--ORG--NAME/snapshots/REVISION/, whose files are symlinks into
// blobs/), and folders the user names (agentRl.modelFolders, --folder: a checkpoint folder itself or a
// folder of them). Each is described without reading a weight — architecture, parameters, stored
// dtypes — with whether seed 000's preset fits its memory plan on the backend, or why not.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fittingEnginePlan } from './engine/enginePlan';
import { engineQ8Unsupported, engineUnsupported } from './engine/engineWeights';
import { parameterCount } from './families/familyOf';
import { readHfConfig, type HfArchitecture } from './hfConfig';
import { fittingPlan } from './memoryPlan';
import { checkpointTensors } from './safetensors';
import type { FoundModel, Seed000Plan } from '../../../../shared/foundModel';

export type { FoundModel };

/** The cache folders to look in, in the order Hugging Face's own tools resolve them (existing ones only). */
export function cacheRoots(env: NodeJS.ProcessEnv = process.env, home = os.homedir()): string[] {
  const roots: string[] = [];
  if (env.HF_HUB_CACHE) roots.push(env.HF_HUB_CACHE);
  if (env.HUGGINGFACE_HUB_CACHE) roots.push(env.HUGGINGFACE_HUB_CACHE);
  if (env.HF_HOME) roots.push(path.join(env.HF_HOME, 'hub'));
  if (env.XDG_CACHE_HOME) roots.push(path.join(env.XDG_CACHE_HOME, 'huggingface', 'hub'));
  roots.push(path.join(home, '.cache', 'huggingface', 'hub'));
  return [...new Set(roots.map((r) => path.resolve(r)))].filter((r) => isDir(r));
}

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Whether a folder (following symlinks, as a cache snapshot needs) holds a config.json. */
function isCheckpoint(dir: string): boolean {
  try {
    return fs.statSync(path.join(dir, 'config.json')).isFile();
  } catch {
    return false;
  }
}

/** The snapshots of one cache root's model repositories. */
function cacheEntries(root: string): { name: string; dir: string; revision: string; main: boolean }[] {
  const out: { name: string; dir: string; revision: string; main: boolean }[] = [];
  for (const entry of safeReaddir(root)) {
    if (!entry.startsWith('models--')) continue;
    const name = entry.slice('models--'.length).replace('--', '/');
    const repo = path.join(root, entry);
    let main = '';
    try {
      main = fs.readFileSync(path.join(repo, 'refs', 'main'), 'utf8').trim();
    } catch {
      /* no refs/main: every snapshot is listed */
    }
    for (const revision of safeReaddir(path.join(repo, 'snapshots'))) {
      const dir = path.join(repo, 'snapshots', revision);
      if (isCheckpoint(dir)) out.push({ name, dir, revision, main: revision === main });
    }
  }
  return out;
}

function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir).sort();
  } catch {
    return [];
  }
}

/** A named folder: a checkpoint itself, or the checkpoints one level below it. */
function folderEntries(folder: string): { name: string; dir: string }[] {
  const abs = path.resolve(folder);
  if (isCheckpoint(abs)) return [{ name: path.basename(abs), dir: abs }];
  return safeReaddir(abs)
    .map((n) => ({ name: n, dir: path.join(abs, n) }))
    .filter((e) => isCheckpoint(e.dir));
}

/**
 * Seed 000's preset (LoRA rank 8, 1,024-token contexts, 12 rows sampled at once) against the backend's
 * memory: the engine's plan on wasm (where it runs the model) — the one a run would take, and the plans
 * at q8 and at bfloat16 beside it — else the tfjs decoder's. Reads config.json only, no weight.
 */
export function seed000Fit(arch: HfArchitecture, backend: string, threads = Math.min(os.availableParallelism(), 14)): NonNullable<FoundModel['seed000']> {
  const lora = { rank: 8, alpha: 16, dropout: 0, targets: ['all-linear'] };
  const contextLength = Math.min(1024, arch.maxPositions);
  if (backend === 'wasm' && !engineUnsupported(arch)) {
    const o = { lora, contextLength, sampleRows: 12, threads };
    // bfloat16 (or float32) first; where that does not fit, Q8_0 blocks (weightDtype q8), the run's way out
    const auto = fittingEnginePlan(arch, { ...o, dtype: 'auto' });
    const q8 = engineQ8Unsupported(arch) ? undefined : fittingEnginePlan(arch, { ...o, dtype: 'q8' });
    const bf16 = fittingEnginePlan(arch, { ...o, dtype: 'bf16' });
    const p = auto.fits || !q8 ? auto : q8;
    const plans: Seed000Plan[] = [
      ...(q8 ? [{ dtype: 'q8' as const, fits: q8.fits, total: q8.total }] : []),
      { dtype: 'bf16', fits: bf16.fits, total: bf16.total },
    ];
    return { fits: p.fits, total: p.total, limit: p.limit, on: 'the wasm engine', dtype: p.dtype, plans };
  }
  const p = fittingPlan(arch, { lora, contextLength, sampleRows: 12, backend });
  return { fits: p.fits, total: p.total, limit: p.limit, on: `tfjs ${backend}` };
}

function describeFolder(base: { name: string; dir: string; foundIn: string; revision?: string; main?: boolean }, backend: string): FoundModel {
  try {
    const arch = readHfConfig(base.dir);
    const stored = checkpointTensors(base.dir);
    const dtypes = [...new Set([...stored.values()].map((t) => t.dtype))].join(', ');
    return { ...base, modelType: arch.modelType, parameters: parameterCount(arch), dtypes, seed000: seed000Fit(arch, backend) };
  } catch (e) {
    return { ...base, problem: firstLine(e instanceof Error ? e.message : String(e), base.dir) };
  }
}

/**
 * The first line of a loader's message (the rest is detail), where a line break inside the folder's own
 * path (a folder name may hold one) does not count: the reason after the path is kept.
 */
function firstLine(message: string, dir: string): string {
  const pieces = message.split(dir);
  const end = pieces.findIndex((p) => p.includes('\n'));
  return end < 0 ? message : [...pieces.slice(0, end), pieces[end]!.split('\n')[0]!].join(dir);
}

/** Every checkpoint in the cache roots and the named folders, described for the `backend` a run would use. */
export function findModels(o: { folders?: readonly string[]; backend: string; env?: NodeJS.ProcessEnv; home?: string }): FoundModel[] {
  const out: FoundModel[] = [];
  const seen = new Set<string>();
  const add = (m: { name: string; dir: string; foundIn: string; revision?: string; main?: boolean }): void => {
    let real = m.dir;
    try {
      real = fs.realpathSync(m.dir);
    } catch {
      /* listed as it is */
    }
    if (seen.has(real)) return;
    seen.add(real);
    out.push(describeFolder(m, o.backend));
  };
  for (const root of cacheRoots(o.env, o.home)) for (const e of cacheEntries(root)) add({ ...e, foundIn: root });
  for (const folder of o.folders ?? []) for (const e of folderEntries(folder)) add({ ...e, foundIn: path.resolve(folder) });
  return out;
}
