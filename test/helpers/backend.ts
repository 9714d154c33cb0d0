// Tests of the wasm kernels run on the wasm backend only; elsewhere they are reported as skipped
// (with the backend this process got), never passed silently.
import * as tf from '@tensorflow/tfjs';
import type { TestContext } from 'node:test';

/** Marks the test skipped, with the reason, when this process does not run on tfjs-backend-wasm. */
export function skipOffWasm(t: TestContext): boolean {
  if (tf.getBackend() === 'wasm') return false;
  t.skip(`our wasm kernels only run on the wasm backend; this process uses "${tf.getBackend()}"`);
  return true;
}
