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
function instantiateOnTfjsHeap(base64: string): Record<string, unknown> {
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

/** A kernel module registered lazily on first use: `ready()` says whether its kernels can run now. */
export interface KernelModule {
  ready(): boolean;
  /** Why not, where they cannot ('' while unknown or ready). */
  readonly reason: string;
}

/**
 * Instantiates `base64` on tfjs-wasm's heap and calls `register` with its exports, once, the first time
 * `ready()` is asked on the wasm backend; remembers a failure and its reason.
 */
export function kernelModule(base64: string, register: (exports: Record<string, unknown>) => void): KernelModule {
  let state: 'unknown' | 'native' | 'fallback' = 'unknown';
  let reason = '';
  return {
    ready(): boolean {
      if (state === 'unknown' && tf.getBackend() === 'wasm') {
        try {
          register(instantiateOnTfjsHeap(base64));
          state = 'native';
        } catch (e) {
          state = 'fallback';
          reason = `SIMD kernel unavailable: ${(e as Error).message}`;
        }
      }
      return state === 'native' && tf.getBackend() === 'wasm';
    },
    get reason(): string {
      return reason;
    },
  };
}

/**
 * Registers a kernel for the wasm backend: `run` gets the backend's internals, the inputs by name and
 * the attributes, and returns the output(s) it allocated with makeOutput. Read heap offsets after the
 * last makeOutput: an allocation may grow (and move) the heap.
 */
export function registerWasmKernel<A = Record<string, never>>(
  kernelName: string,
  run: (backend: WasmBackendInternals, inputs: Record<string, tf.TensorInfo>, attrs: A) => tf.TensorInfo | tf.TensorInfo[],
): void {
  tf.registerKernel({
    kernelName,
    backendName: 'wasm',
    kernelFunc: ({ inputs, backend, attrs }) => run(backend as unknown as WasmBackendInternals, inputs as Record<string, tf.TensorInfo>, attrs as unknown as A),
  });
}

/** Number of elements of a tensor. */
export function elementCount(t: tf.TensorInfo): number {
  return t.shape.reduce((n, d) => n * d, 1);
}
