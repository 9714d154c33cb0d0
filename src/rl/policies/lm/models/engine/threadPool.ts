// The engine's threads: worker threads that each instantiate the kernel module on the one shared
// memory, woken by an atomic generation counter. A parallel call writes each thread's arguments into
// its slot of the control block, wakes the workers, runs part 0 on the calling thread and waits for
// the others; a kernel that traps on any thread is an error of the call, with the kernel's name.
//
// Control block (the first 4 KiB of the memory, reserved by EngineMemory), int32 words:
//   0 generation · 1 done · 2 kernel index · 3 stop · 4 error (thread + 1) · 5 workers
// then per thread a slot of 32 float64 arguments (the last one is the argument count, 0 = no work),
// and an error text at ERROR_TEXT.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';

export const KERNEL_NAMES = [
  'nt_f32',
  'nt_bf16',
  'nn_f32',
  'nn_bf16',
  'tn_f32',
  'add',
  'scale',
  'fill',
  'add_bias',
  'rmsnorm',
  'rmsnorm_bwd',
  'rope',
  'swiglu',
  'swiglu_bwd',
  'embed_bf16',
  'embed_f32',
  'kv_store',
  'attn_fwd',
  'attn_bwd',
  'attn_decode',
  'lse_update',
  'softmax_bwd',
  'interleave8',
  'f32_to_bf16',
  // the 8-bit kernels over Q8_0 blocks (scripts/kernels/q8Wat.mjs, appended to the module)
  'q8_quantize',
  'q8_dequantize',
  'q8_nt',
  // the sampler's draw: each row's normaliser and its walk (scripts/kernels/drawWat.mjs, appended to the module)
  'draw_norm',
  'draw_walk',
] as const;
export type KernelName = (typeof KERNEL_NAMES)[number];

export const MAX_THREADS = 14;
const GEN = 0,
  DONE = 1,
  OP = 2,
  STOP = 3,
  ERR = 4;
export const ARGS_OFFSET = 256;
const SLOT = 32; // float64 per thread
export const ERROR_TEXT = ARGS_OFFSET + MAX_THREADS * SLOT * 8; // 3840
export const CONTROL_BYTES = 4096;

type KernelFn = (...args: number[]) => void;

interface WasmApi {
  readonly Module: new (bytes: Uint8Array) => object;
  readonly Instance: new (module: object, imports: object) => { readonly exports: Record<string, unknown> };
}
const WA = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/** A kernel that trapped (out-of-bounds access, …) on some thread. */
export class EngineKernelError extends Error {
  override name = 'EngineKernelError';
}

/** The kernel functions of one instance, by index (the order of KERNEL_NAMES). */
export function kernelTable(instance: Record<string, unknown>): KernelFn[] {
  return KERNEL_NAMES.map((n) => {
    const f = instance[n];
    if (typeof f !== 'function') throw new Error(`engine kernels: the module has no export ${n} (rebuild with npm run build:kernels)`);
    return f as KernelFn;
  });
}

function threadScript(): string {
  for (const candidate of [path.join(__dirname, 'engineThread.js'), path.join(__dirname, 'engine-thread.js')]) {
    if (fs.existsSync(candidate)) return candidate;
  }
  throw new Error(`engine thread script not found next to ${__dirname} (engineThread.js); rebuild with npm run build`);
}

export class ThreadPool {
  private readonly ctrl: Int32Array;
  private readonly args: Float64Array;
  private readonly own: KernelFn[];
  private closed = false;

  private constructor(
    private readonly memory: { readonly buffer: SharedArrayBuffer },
    module: object,
    private readonly workers: Worker[],
  ) {
    this.ctrl = new Int32Array(memory.buffer, 0, 16);
    this.args = new Float64Array(memory.buffer, ARGS_OFFSET, MAX_THREADS * SLOT);
    this.own = kernelTable(new WA.Instance(module, { env: { memory } }).exports);
  }

  /** `threads` in all, the calling one included (1 = no workers). */
  static async start(memory: { readonly buffer: SharedArrayBuffer }, module: object, threads: number): Promise<ThreadPool> {
    const n = Math.max(1, Math.min(MAX_THREADS, Math.floor(threads)));
    const workers: Worker[] = [];
    const ready: Promise<void>[] = [];
    const script = n > 1 ? threadScript() : '';
    for (let tid = 1; tid < n; tid++) {
      const w = new Worker(script, { workerData: { memory, module, tid } });
      w.unref();
      ready.push(
        new Promise((resolve, reject) => {
          w.once('message', (m: unknown) => (m === 'ready' ? resolve() : reject(new Error(`engine thread ${tid}: ${String(m)}`))));
          w.once('error', reject);
        }),
      );
      workers.push(w);
    }
    const pool = new ThreadPool(memory, module, workers);
    try {
      await Promise.all(ready);
    } catch (e) {
      await pool.close();
      throw e;
    }
    return pool;
  }

  /** Threads in all (the calling one included). */
  get size(): number {
    return this.workers.length + 1;
  }

  /** Milliseconds and calls per kernel since the last `takeProfile` (collected when AGENT_RL_ENGINE_PROFILE is set). */
  private readonly profile = process.env.AGENT_RL_ENGINE_PROFILE ? new Map<KernelName, { ms: number; calls: number }>() : undefined;

  takeProfile(): Map<KernelName, { ms: number; calls: number }> | undefined {
    const p = this.profile ? new Map(this.profile) : undefined;
    this.profile?.clear();
    return p;
  }

  /** Runs `kernel` with each part's arguments on its own thread (part 0 here); parts ≤ size. */
  run(kernel: KernelName, parts: readonly (readonly number[])[]): void {
    if (!this.profile) return this.dispatch(kernel, parts);
    const t = performance.now();
    try {
      this.dispatch(kernel, parts);
    } finally {
      const e = this.profile.get(kernel) ?? { ms: 0, calls: 0 };
      e.ms += performance.now() - t;
      e.calls += 1;
      this.profile.set(kernel, e);
    }
  }

  private dispatch(kernel: KernelName, parts: readonly (readonly number[])[]): void {
    if (this.closed) throw new Error('engine: used after close()');
    const op = KERNEL_NAMES.indexOf(kernel);
    const first = parts[0];
    if (!first) return;
    if (parts.length === 1 || this.workers.length === 0) {
      for (const p of parts) this.call(op, p);
      return;
    }
    if (parts.length > this.size) throw new Error(`engine: ${parts.length} parts for ${this.size} threads`);
    for (let t = 1; t < this.size; t++) {
      const p = parts[t];
      const base = t * SLOT;
      if (!p) {
        this.args[base + SLOT - 1] = 0;
        continue;
      }
      for (let i = 0; i < p.length; i++) this.args[base + i] = p[i]!;
      this.args[base + SLOT - 1] = p.length;
    }
    Atomics.store(this.ctrl, OP, op);
    Atomics.store(this.ctrl, DONE, 0);
    Atomics.store(this.ctrl, ERR, 0);
    Atomics.add(this.ctrl, GEN, 1);
    Atomics.notify(this.ctrl, GEN);
    let failure: unknown;
    try {
      this.call(op, first);
    } catch (e) {
      failure = e;
    }
    const want = this.workers.length;
    for (let d = Atomics.load(this.ctrl, DONE); d < want; d = Atomics.load(this.ctrl, DONE)) Atomics.wait(this.ctrl, DONE, d);
    const bad = Atomics.load(this.ctrl, ERR);
    if (bad > 0) throw new EngineKernelError(`engine kernel ${kernel} failed on thread ${bad - 1}: ${this.errorText()}`);
    if (failure) throw new EngineKernelError(`engine kernel ${kernel} failed: ${(failure as Error).message}`);
  }

  private call(op: number, p: readonly number[]): void {
    this.own[op]!(...p);
  }

  private errorText(): string {
    const bytes = new Uint8Array(this.memory.buffer, ERROR_TEXT, CONTROL_BYTES - ERROR_TEXT);
    const end = bytes.indexOf(0);
    return Buffer.from(bytes.slice(0, end < 0 ? bytes.length : end)).toString('utf8') || 'unknown error';
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    Atomics.store(this.ctrl, STOP, 1);
    Atomics.add(this.ctrl, GEN, 1);
    Atomics.notify(this.ctrl, GEN);
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

/** The loop of a worker thread (engineThread.ts). */
export function threadLoop(memory: { readonly buffer: SharedArrayBuffer }, module: object, tid: number, ready: () => void): void {
  const ctrl = new Int32Array(memory.buffer, 0, 16);
  const args = new Float64Array(memory.buffer, ARGS_OFFSET, MAX_THREADS * SLOT);
  const fns = kernelTable(new WA.Instance(module, { env: { memory } }).exports);
  // read before saying ready: the first call may come the moment the pool hears it
  let gen = Atomics.load(ctrl, GEN);
  ready();
  for (;;) {
    Atomics.wait(ctrl, GEN, gen);
    gen = Atomics.load(ctrl, GEN);
    if (Atomics.load(ctrl, STOP)) return;
    const base = tid * SLOT;
    const n = args[base + SLOT - 1]!;
    if (n > 0) {
      try {
        const a: number[] = [];
        for (let i = 0; i < n; i++) a.push(args[base + i]!);
        fns[Atomics.load(ctrl, OP)]!(...a);
      } catch (e) {
        const text = Buffer.from(String((e as Error).message ?? e)).subarray(0, CONTROL_BYTES - ERROR_TEXT - 1);
        const out = new Uint8Array(memory.buffer, ERROR_TEXT, CONTROL_BYTES - ERROR_TEXT);
        out.fill(0);
        out.set(text);
        Atomics.store(ctrl, ERR, tid + 1);
      }
    }
    Atomics.add(ctrl, DONE, 1);
    Atomics.notify(ctrl, DONE);
  }
}
