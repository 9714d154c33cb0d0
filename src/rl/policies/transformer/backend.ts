// Compute backend, chosen once per process and recorded with the run: @tensorflow/tfjs-node-gpu,
// then @tensorflow/tfjs-node (optional dependencies, used when they load), then tfjs-backend-wasm
// with SIMD (the fast one on machines without them: 10–20× the plain CPU backend for transformer
// work), then the plain JS CPU backend. A setting forces one.
import * as tf from '@tensorflow/tfjs';
import * as path from 'node:path';

export const BACKEND_NAMES = ['auto', 'tensorflow-gpu', 'tensorflow', 'wasm', 'cpu'] as const;
export type BackendChoice = (typeof BACKEND_NAMES)[number];

export interface BackendInfo {
  /** tfjs backend name after initialisation ('tensorflow', 'wasm', 'cpu'). */
  readonly name: string;
  /** What was tried and why the better ones were skipped. */
  readonly notes: string[];
}

let chosen: BackendInfo | undefined;

function tryRequire(id: string): string | undefined {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require(id);
    return undefined;
  } catch (e) {
    return (e as Error).message.split('\n')[0];
  }
}

async function initWasm(): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const wasm = require('@tensorflow/tfjs-backend-wasm') as typeof import('@tensorflow/tfjs-backend-wasm');
  const dist = path.join(path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json')), 'dist') + path.sep;
  wasm.setWasmPaths(dist);
  if (!(await tf.setBackend('wasm'))) throw new Error('tf.setBackend("wasm") returned false');
}

/** Initialises the backend (idempotent: the first choice in a process wins). */
export async function initBackend(choice: BackendChoice = 'auto'): Promise<BackendInfo> {
  if (chosen) return chosen;
  const notes: string[] = [];
  const order: BackendChoice[] = choice === 'auto' ? ['tensorflow-gpu', 'tensorflow', 'wasm', 'cpu'] : [choice];
  for (const b of order) {
    try {
      if (b === 'tensorflow-gpu' || b === 'tensorflow') {
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
      chosen = { name: tf.getBackend(), notes };
      return chosen;
    } catch (e) {
      notes.push(`${b}: ${(e as Error).message}`);
      if (choice !== 'auto') throw new Error(`compute backend "${choice}" is not available: ${(e as Error).message}. Fix: install it, or use backend "auto"`);
    }
  }
  throw new Error(`no compute backend could be initialised: ${notes.join('; ')}`);
}
