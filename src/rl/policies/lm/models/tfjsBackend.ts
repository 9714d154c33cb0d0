// Compute backend, chosen once per process and recorded with the run: @tensorflow/tfjs-node-gpu, then
// WebGPU through Dawn (the optional `webgpu` package: Vulkan on Linux, Metal on macOS, D3D12 on Windows)
// when it reports a hardware adapter, then @tensorflow/tfjs-node (optional dependencies, used when they
// load), then tfjs-backend-wasm with SIMD (the fast one on machines without them: 10–20× the plain CPU
// backend for transformer work), then the plain JS CPU backend. A setting forces one; a forced webgpu
// takes a software adapter too (SwiftShader, llvmpipe: correct and slow, for tests). Every tensor read
// is asynchronous (`await data()`): WebGPU in Node has no synchronous read. On VS Code's own runtime
// (Electron's Node) only wasm and cpu are offered: Dawn's external buffers are rejected there, and the
// tfjs-node packages are a system Node's install.
import * as tf from '@tensorflow/tfjs';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describeVersions, systemNodeOnlyBackendsBlocked } from '../../../../shared/nodeFloor';
import { listenForWasmFailures } from '../../../tfjsHealth';

export const BACKEND_NAMES = ['auto', 'tensorflow-gpu', 'webgpu', 'tensorflow', 'wasm', 'cpu'] as const;
export type BackendChoice = (typeof BACKEND_NAMES)[number];

/** The GPU a WebGPU backend runs on, as Dawn describes it. */
export interface AdapterInfo {
  readonly vendor: string;
  readonly architecture: string;
  readonly device: string;
  readonly description: string;
  /** A fallback or software adapter (SwiftShader, llvmpipe, lavapipe, WARP): not a GPU. */
  readonly software: boolean;
}

export interface BackendInfo {
  /** tfjs backend name after initialisation ('tensorflow', 'webgpu', 'wasm', 'cpu'). */
  readonly name: string;
  /** What was tried and why the better ones were skipped. */
  readonly notes: string[];
  /** webgpu: the adapter. */
  readonly adapter?: AdapterInfo;
}

/** The backend and, for webgpu, its adapter, in one line (run records, model check). */
export function describeBackend(b: BackendInfo): string {
  if (!b.adapter) return b.name;
  const a = b.adapter;
  const what = [a.vendor, a.architecture, a.device, a.description].filter((x) => x !== '').join(' · ') || 'unnamed adapter';
  return `${b.name} on ${what}${a.software ? ' (software adapter)' : ''}`;
}

const SOFTWARE_ADAPTERS = /swiftshader|llvmpipe|lavapipe|softpipe|warp|microsoft basic render/i;

interface GpuAdapterLike {
  readonly isFallbackAdapter?: boolean;
  readonly info?: { vendor?: string; architecture?: string; device?: string; description?: string };
}

/** Linux: whether libvulkan.so.1, which Dawn needs for any adapter, is where the loader looks. */
function vulkanLoaderFound(): boolean {
  const dirs = [
    ...(process.env.LD_LIBRARY_PATH ?? '').split(':'),
    '/usr/lib/x86_64-linux-gnu',
    '/usr/lib/aarch64-linux-gnu',
    '/usr/lib64',
    '/usr/lib',
    '/lib/x86_64-linux-gnu',
    '/lib/aarch64-linux-gnu',
  ].filter((d) => d !== '');
  return dirs.some((d) => fs.existsSync(path.join(d, 'libvulkan.so.1')));
}

function vulkanLoaderNote(): string {
  if (process.platform !== 'linux') return '';
  return vulkanLoaderFound()
    ? "libvulkan.so.1 loads, so no Vulkan driver (ICD) offered an adapter Dawn accepts: install the GPU vendor's Vulkan driver (NVIDIA's with NVIDIA_DRIVER_CAPABILITIES including graphics in containers, or mesa-vulkan-drivers)"
    : "libvulkan.so.1 is missing: apt-get install libvulkan1 and the GPU vendor's Vulkan driver";
}

/**
 * WebGPU through Dawn's Node bindings. Software adapters only when `software` (a forced choice);
 * `auto` wants a GPU.
 */
async function initWebgpu(software: boolean): Promise<AdapterInfo> {
  // auto on Linux without the Vulkan loader: skip Dawn altogether (it would only warn and find nothing)
  if (!software && process.platform === 'linux' && !vulkanLoaderFound()) throw new Error(`no GPU through WebGPU here (${vulkanLoaderNote()})`);
  let dawn: { create(flags: string[]): { requestAdapter(o?: object): Promise<GpuAdapterLike | null> }; globals: Record<string, unknown> };
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    dawn = require('webgpu') as typeof dawn;
  } catch (e) {
    throw new Error(
      `the webgpu package (Dawn) is not installed or does not load (${(e as Error).message.split('\n')[0]}). Fix: npm install webgpu (an optional dependency)`,
    );
  }
  const flags = (process.env.AGENT_RL_DAWN_FLAGS ?? '').split(',').filter((f) => f !== '');
  const gpu = dawn.create(flags);
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter)
    throw new Error(
      `Dawn found no WebGPU adapter${process.platform === 'linux' ? ` (${vulkanLoaderNote()})` : process.platform === 'darwin' ? ' (Metal)' : ' (D3D12)'}`,
    );
  const i = adapter.info ?? {};
  const info: AdapterInfo = {
    vendor: i.vendor ?? '',
    architecture: i.architecture ?? '',
    device: i.device ?? '',
    description: i.description ?? '',
    software:
      adapter.isFallbackAdapter === true || SOFTWARE_ADAPTERS.test(`${i.vendor ?? ''} ${i.architecture ?? ''} ${i.device ?? ''} ${i.description ?? ''}`),
  };
  if (info.software && !software)
    throw new Error(
      `the only WebGPU adapter is a software one (${describeBackend({ name: 'webgpu', notes: [], adapter: info })}), slower than wasm; force it with backend "webgpu"`,
    );
  // tfjs-backend-webgpu looks for navigator.gpu and the WebGPU globals when it is loaded
  Object.assign(globalThis, dawn.globals);
  const nav = (globalThis as { navigator?: object }).navigator;
  if (nav)
    Object.defineProperty(nav, 'gpu', { value: gpu, configurable: true }); // Node ≥ 21 has one: keep its own properties
  else Object.defineProperty(globalThis, 'navigator', { value: { gpu }, configurable: true, writable: true });
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('@tensorflow/tfjs-backend-webgpu');
  if (!(await tf.setBackend('webgpu'))) throw new Error('tf.setBackend("webgpu") returned false');
  return info;
}

let chosen: BackendInfo | undefined;

/** A forced backend that cannot start here: what is missing, the fix, and what auto would take. */
export class BackendUnavailableError extends Error {
  readonly exitCode = 2; // bad input, not a failure while running: agent-rl exits 2 (src/cli/exitCodes.ts)
  override name = 'BackendUnavailableError';
}

function tryRequire(id: string): string | undefined {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require(id);
    return undefined;
  } catch (e) {
    return (e as Error).message.split('\n')[0];
  }
}

/**
 * Where tfjs-backend-wasm's .wasm files are: beside the bundle in the packaged extension (esbuild's
 * production build bundles tfjs and copies them to dist/wasm), else in the package's own dist folder.
 */
function wasmBinariesDir(): string {
  const beside = path.join(__dirname, 'wasm');
  if (fs.existsSync(path.join(beside, 'tfjs-backend-wasm-simd.wasm'))) return beside + path.sep;
  const pkg = '@tensorflow/tfjs-backend-wasm/package.json'; // resolved at run time: a development build keeps tfjs external
  return path.join(path.dirname(require.resolve(pkg)), 'dist') + path.sep;
}

async function initWasm(): Promise<void> {
  listenForWasmFailures();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const wasm = require('@tensorflow/tfjs-backend-wasm') as typeof import('@tensorflow/tfjs-backend-wasm');
  wasm.setWasmPaths(wasmBinariesDir());
  if (!(await tf.setBackend('wasm'))) throw new Error('tf.setBackend("wasm") returned false');
}

/** Initialises the backend (idempotent: the first choice in a process wins). */
export async function initBackend(choice: BackendChoice = 'auto'): Promise<BackendInfo> {
  if (chosen) return chosen;
  const notes: string[] = [];
  const order: BackendChoice[] = choice === 'auto' ? ['tensorflow-gpu', 'webgpu', 'tensorflow', 'wasm', 'cpu'] : [choice];
  let adapter: AdapterInfo | undefined;
  for (const b of order) {
    try {
      if (b !== 'wasm' && b !== 'cpu' && systemNodeOnlyBackendsBlocked(process.versions)) {
        throw new Error(
          `${b === 'webgpu' ? 'WebGPU (Dawn)' : b === 'tensorflow' ? '@tensorflow/tfjs-node' : '@tensorflow/tfjs-node-gpu'} does not run on VS Code's own runtime (${describeVersions(process.versions)}: Electron's memory cage rejects native external buffers). Fix: set agentRl.nodePath to a system Node.js 22.14 or newer with the package installed`,
        );
      }
      if (b === 'webgpu') {
        adapter = await initWebgpu(choice === 'webgpu');
      } else if (b === 'tensorflow-gpu' || b === 'tensorflow') {
        const pkg = b === 'tensorflow-gpu' ? '@tensorflow/tfjs-node-gpu' : '@tensorflow/tfjs-node';
        const err = tryRequire(pkg);
        if (err) throw new Error(`${pkg} is not installed or does not load (${err})`);
        if (!(await tf.setBackend('tensorflow'))) throw new Error('tf.setBackend("tensorflow") returned false');
      } else if (b === 'wasm') {
        await initWasm();
      } else {
        if (!(await tf.setBackend('cpu'))) throw new Error('tf.setBackend("cpu") returned false');
      }
      await tf.ready();
      chosen = { name: tf.getBackend(), notes, ...(adapter ? { adapter } : {}) };
      return chosen;
    } catch (e) {
      notes.push(`${b}: ${(e as Error).message}`);
      if (choice !== 'auto') {
        const why = (e as Error).message;
        throw new BackendUnavailableError(
          `compute backend "${choice}" is not available: ${why}${/Fix:/.test(why) ? '' : '. Fix: install it'}; or use backend "auto" (here it would take ${autoWouldTake()})`,
        );
      }
    }
  }
  throw new Error(`no compute backend could be initialised: ${notes.join('; ')}`);
}

/** The backend auto would take here, without initialising one (for a forced backend's error). */
function autoWouldTake(): string {
  if (systemNodeOnlyBackendsBlocked(process.versions)) return 'wasm';
  for (const [name, pkg] of [
    ['tensorflow-gpu', '@tensorflow/tfjs-node-gpu'],
    ['tensorflow', '@tensorflow/tfjs-node'],
  ] as const) {
    try {
      require.resolve(pkg);
      return name;
    } catch {
      /* not installed */
    }
  }
  return 'wasm';
}
