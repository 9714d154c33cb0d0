// What our hand-written WebAssembly kernels share: instantiating a module on tfjs-wasm's own linear
// memory (so kernels read and write tensors where they lie, with no copies), and the backend
// internals a kernel needs (heap offsets of tensors, allocation of outputs).
import * as tf from '@tensorflow/tfjs';

export interface WasmBackendInternals {
  readonly wasm: { readonly asm?: { readonly memory?: unknown } };
  readonly dataIdMap: { get(id: object): { memoryOffset: number } | undefined };
  makeOutput(shape: number[], dtype: 'float32' | 'int32'): tf.TensorInfo;
}

// The WebAssembly global, typed here (the project's lib settings leave out the DOM typings).
interface WasmApi {
  readonly Memory: abstract new (...args: never[]) => object;
  readonly Module: new (bytes: Uint8Array) => object;
  readonly Instance: new (module: object, imports: object) => { readonly exports: Record<string, unknown> };
}
const WA = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/**
 * Instantiates a kernel module (base64 bytes from scripts/buildKernels.mjs) on the current wasm
 * backend's memory; throws with the reason where that is impossible.
 */
export function instantiateOnTfjsHeap(base64: string): Record<string, unknown> {
  if (tf.getBackend() !== 'wasm') throw new Error(`backend ${tf.getBackend()} is not wasm`);
  const memory = (tf.backend() as unknown as WasmBackendInternals).wasm.asm?.memory;
  if (!(memory instanceof WA.Memory)) throw new Error('tfjs-wasm does not expose its memory');
  return new WA.Instance(new WA.Module(Buffer.from(base64, 'base64')), { env: { memory } }).exports;
}

/** Byte offset of a tensor's data in the wasm heap. Read it after every allocation: the heap may move. */
export function heapOffset(backend: WasmBackendInternals, t: tf.TensorInfo): number {
  const entry = backend.dataIdMap.get(t.dataId);
  if (!entry) throw new Error('tensor is not on the wasm backend');
  return entry.memoryOffset;
}
