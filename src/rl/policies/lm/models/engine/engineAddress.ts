// The engine's address mode: wasm32 (one shared memory of at most 4 GiB, the kernels' pointers i32) or
// memory64 (up to V8's 16 GiB, pointers i64 inside the kernels; scripts/kernels/watText.mjs). Both
// kernel builds come from one generator; this file says which one this runtime can run and which one a
// plan of a given size takes. Node 24's V8 accepts shared 64-bit memories without a flag; VS Code's
// Electron runs whatever V8 it ships (memory64 shipped in Chrome 133), so the runtime is probed, never
// assumed: a shared 64-bit memory must be created and the 64-bit kernel module must validate.
import * as os from 'node:os';
import { bytes as formatBytes } from '../../../../../shared/format';
import { ENGINE_PLAIN64_BASE64, ENGINE_RELAXED64_BASE64 } from './engineWasm';

export type AddressMode = 'wasm32' | 'memory64';

const PAGE = 65536;
/** wasm32's address space: 65,536 pages of 64 KiB. */
export const MAX_WASM32_BYTES = 65536 * PAGE;
/** V8's largest 64-bit memory: 262,144 pages (16 GiB; a larger maximum is refused at creation). */
export const MAX_MEMORY64_BYTES = 262144 * PAGE;

interface WasmProbeApi {
  readonly Memory: new (d: { initial: bigint; maximum: bigint; shared: boolean; address: 'i64' }) => { readonly buffer: SharedArrayBuffer };
  validate(bytes: Uint8Array): boolean;
}
const WA = (globalThis as unknown as { WebAssembly: WasmProbeApi }).WebAssembly;

export interface Memory64Support {
  readonly ok: boolean;
  /** Why not (the runtime's own message), or what was checked. */
  readonly why: string;
}

let probed: Memory64Support | undefined;

/** Whether this runtime runs the engine on a 64-bit memory: probed once per process. */
export function memory64Support(): Memory64Support {
  if (probed) return probed;
  probed = probe();
  return probed;
}

function probe(): Memory64Support {
  try {
    const m = new WA.Memory({ initial: 1n, maximum: 2n, shared: true, address: 'i64' });
    if (!(m.buffer instanceof SharedArrayBuffer)) return { ok: false, why: 'its 64-bit memories cannot be shared between threads' };
  } catch (e) {
    return { ok: false, why: `it refuses a shared 64-bit memory (${(e as Error).message})` };
  }
  const relaxed = WA.validate(Buffer.from(ENGINE_RELAXED64_BASE64, 'base64'));
  if (!relaxed && !WA.validate(Buffer.from(ENGINE_PLAIN64_BASE64, 'base64'))) return { ok: false, why: 'it does not validate the 64-bit kernel module' };
  return { ok: true, why: `shared 64-bit memory and the 64-bit kernels (${relaxed ? 'relaxed SIMD' : 'SIMD'}) accepted` };
}

/**
 * The share of the machine's memory a 64-bit engine memory may be planned to: the rest is the system's,
 * Node's, tfjs's (the adapters and AdamW) and the sandboxes'. A plan is reserved whole when the run starts
 * and its pages are touched as the run goes, so a plan past the machine's memory would start and be
 * killed later; wasm32's 4 GiB needs no such bound on the machines the workbench supports.
 */
export const MACHINE_SHARE = 0.75;

/**
 * The memory this process may use: the machine's, or a container's limit where one is set (cgroups:
 * `process.constrainedMemory()`, 0 where none), whichever is smaller — os.totalmem() reports the host's
 * memory inside a container or devcontainer.
 */
export function machineMemory(): number {
  const limit = (process as { constrainedMemory?: () => number | undefined }).constrainedMemory?.() ?? 0;
  return limit > 0 ? Math.min(limit, os.totalmem()) : os.totalmem();
}

/** The largest 64-bit engine memory on a machine of `machineBytes`: V8's 16 GiB or its share of the machine, the smaller. */
export function memory64Limit(machineBytes: number = machineMemory()): number {
  return Math.min(MAX_MEMORY64_BYTES, Math.floor((machineBytes * MACHINE_SHARE) / PAGE) * PAGE);
}

/** The largest engine memory of a mode (memory64: on this machine). */
export function addressLimit(mode: AddressMode): number {
  return mode === 'memory64' ? memory64Limit() : MAX_WASM32_BYTES;
}

/** What bounds a 64-bit plan, for its plan line. */
export function memory64LimitText(machineBytes: number = machineMemory()): string {
  return `at most ${formatBytes(memory64Limit(machineBytes))}: V8's 16 GiB or three quarters of this machine's ${formatBytes(machineBytes)}, the smaller`;
}

export interface AddressChoice {
  readonly mode: AddressMode;
  /** One line: which and why (memory plans, model check, Show Runtime). */
  readonly why: string;
}

/**
 * wasm32 while the plan fits its 4 GiB — what was chosen before 64-bit memories, and a 64-bit memory
 * may cost the kernels explicit bounds checks where wasm32 has guard pages (docs/runs/memory64/
 * bench-idle.txt: the float32 product 0.93×, the bfloat16 and 8-bit ones unresolved around 1) — and memory64 past that where the
 * runtime has it; wasm32 (a plan that does not fit, refused with the fix) where it has not.
 */
export function chooseAddressMode(total: number, support: Memory64Support = memory64Support()): AddressChoice {
  if (total <= MAX_WASM32_BYTES) return { mode: 'wasm32', why: 'wasm32: the plan fits its 4 GiB (a 64-bit memory only past that)' };
  if (support.ok)
    return {
      mode: 'memory64',
      why: `memory64: the plan needs more than wasm32's 4 GiB, and this runtime has 64-bit memories (${support.why}); ${memory64LimitText()}`,
    };
  return { mode: 'wasm32', why: `wasm32 only: this runtime has no 64-bit memory for the engine (${support.why})` };
}

/**
 * The refusal's fix where a plan needs more than 4 GiB and the runtime has no memory64: the runtimes
 * that have it, and what makes the plan smaller.
 */
export const MEMORY64_FIX =
  'run on Node 24 or later (set agentRl.nodePath to it in VS Code, or run agent-rl train in a terminal), whose WebAssembly has 64-bit memories; or make the plan fit 4 GiB: policyOptions.weightDtype "q8", a smaller contextLength, fewer rows sampled at once, a smaller checkpoint';
