// The engine's memory: one shared WebAssembly memory of a size fixed before anything is loaded (the
// plan's total), carved by a stack allocator. Long-lived regions (weights, adapters, tables) are taken
// first and never given back; a pass takes its scratch above them and releases it to a mark. Every
// region has a label, and the allocator keeps its high-water mark, so the plan is checked against what
// the code really took. A request past the end is an error naming the plan and the request — nothing
// ever runs on memory that was not there. The memory is wasm32 (at most 4 GiB) or memory64 (at most
// 16 GiB; engineAddress.ts), as the plan chose; V8 gives typed-array views over all of a memory past 4
// GiB (a Uint8Array's length may exceed 2³²), so offsets here are plain numbers in both modes.
import { bytes as formatBytes } from '../../../../../shared/format';
import { addressLimit, MAX_WASM32_BYTES, memory64LimitText, memory64Support, MEMORY64_FIX, type AddressMode } from './engineAddress';

/** The engine could not get the memory it needs: the message names the plan, the request and the way out. */
export class EngineMemoryError extends Error {
  readonly exitCode = 2; // bad input, not a failure while running: agent-rl exits 2 (src/cli/exitCodes.ts)
  override name = 'EngineMemoryError';
}

const PAGE = 65536;
/** wasm32's address space: 65,536 pages of 64 KiB (memory64's: engineAddress.ts). */
export const MAX_ENGINE_BYTES = MAX_WASM32_BYTES;
const ALIGN = 64;

interface WasmMemory {
  readonly buffer: SharedArrayBuffer;
}
interface WasmMemoryApi {
  // a 64-bit memory takes its page counts as BigInts
  readonly Memory: new (
    d: { initial: number; maximum: number; shared: boolean } | { initial: bigint; maximum: bigint; shared: boolean; address: 'i64' },
  ) => WasmMemory;
}
const WA = (globalThis as unknown as { WebAssembly: WasmMemoryApi }).WebAssembly;

export interface Region {
  readonly offset: number;
  readonly bytes: number;
  readonly label: string;
}

export class EngineMemory {
  readonly memory: WasmMemory;
  readonly f32: Float32Array;
  readonly i32: Int32Array;
  readonly u16: Uint16Array;
  readonly u8: Uint8Array;
  private top: number;
  private highWater: number;
  /** What was taken, in order (the live stack). */
  private readonly regions: Region[] = [];

  /** `bytes`: the plan's total; `planText` names the plan in errors; `mode`: the plan's address mode (engineAddress.ts). */
  constructor(
    readonly bytes: number,
    private readonly planText: string,
    readonly reserved = 4096,
    readonly mode: AddressMode = 'wasm32',
  ) {
    const pages = Math.ceil(bytes / PAGE);
    if (pages * PAGE > addressLimit(mode)) throw new EngineMemoryError(tooLarge(bytes, mode, planText));
    try {
      this.memory =
        mode === 'memory64'
          ? new WA.Memory({ initial: BigInt(pages), maximum: BigInt(pages), shared: true, address: 'i64' })
          : new WA.Memory({ initial: pages, maximum: pages, shared: true });
    } catch (e) {
      throw new EngineMemoryError(
        `the engine could not reserve its ${formatBytes(pages * PAGE)} (${(e as Error).message}): this process cannot get that much memory now. ${planText}`,
      );
    }
    const buf = this.memory.buffer;
    this.f32 = new Float32Array(buf);
    this.i32 = new Int32Array(buf);
    this.u16 = new Uint16Array(buf);
    this.u8 = new Uint8Array(buf);
    this.top = reserved;
    this.highWater = reserved;
  }

  /** Bytes in use now, and the most ever in use. */
  get used(): number {
    return this.top;
  }

  get peak(): number {
    return this.highWater;
  }

  /** A region of `bytes` (64-byte aligned), or an error naming what was asked and the plan. */
  alloc(bytes: number, label: string): number {
    const size = Math.ceil(Math.max(bytes, 0) / ALIGN) * ALIGN;
    const offset = this.top;
    if (offset + size > this.memory.buffer.byteLength) {
      const live = summarize(this.regions);
      throw new EngineMemoryError(
        `the engine ran out of its planned memory: ${label} asked for ${formatBytes(size)} with ${formatBytes(this.memory.buffer.byteLength - offset)} left of ${formatBytes(this.memory.buffer.byteLength)} (in use: ${live}). ${this.planText}`,
      );
    }
    this.top = offset + size;
    this.highWater = Math.max(this.highWater, this.top);
    this.regions.push({ offset, bytes: size, label });
    return offset;
  }

  allocF32(n: number, label: string): number {
    return this.alloc(n * 4, label);
  }

  /** The allocation point, to give back everything taken after it. */
  mark(): number {
    return this.regions.length;
  }

  release(mark: number): void {
    if (mark > this.regions.length) throw new Error('EngineMemory.release: mark from the future');
    this.regions.length = mark;
    const last = this.regions[mark - 1];
    this.top = last ? last.offset + last.bytes : this.reserved;
  }

  /** Runs `f` with scratch regions given back afterwards, also when it throws. */
  scoped<T>(f: () => T): T {
    const m = this.mark();
    try {
      return f();
    } finally {
      this.release(m);
    }
  }

  async scopedAsync<T>(f: () => Promise<T>): Promise<T> {
    const m = this.mark();
    try {
      return await f();
    } finally {
      this.release(m);
    }
  }

  /** Resets the high-water mark to the current use (before measuring one pass). */
  resetPeak(): void {
    this.highWater = this.top;
  }

  /** The live regions grouped by label prefix, largest first (for errors and model check). */
  describe(): string {
    return summarize(this.regions);
  }

  zero(offset: number, bytes: number): void {
    this.u8.fill(0, offset, offset + bytes);
  }
}

/** The refusal of a memory larger than its mode allows, with the fix. */
function tooLarge(bytes: number, mode: AddressMode, planText: string): string {
  if (mode === 'memory64')
    return `the engine needs ${formatBytes(bytes)}, more than a 64-bit engine memory may take here (${memory64LimitText()}). Fix: policyOptions.weightDtype "q8", a smaller contextLength, fewer rows sampled at once, or a smaller checkpoint. ${planText}`;
  const m64 = memory64Support();
  const fix = m64.ok
    ? 'Fix: plan it in memory64 mode (fittingEnginePlan chooses it past 4 GiB)'
    : `This runtime has no 64-bit memory: ${m64.why}. Fix: ${MEMORY64_FIX}`;
  return `the engine needs ${formatBytes(bytes)}, more than wasm's 4 GiB address space (wasm32). ${fix}. ${planText}`;
}

function summarize(regions: readonly Region[]): string {
  const by = new Map<string, number>();
  for (const r of regions) {
    const key = r.label.replace(/ \d+$/, '').replace(/ layer \d+/, ' per layer');
    by.set(key, (by.get(key) ?? 0) + r.bytes);
  }
  return (
    [...by]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 8)
      .map(([k, v]) => `${k} ${formatBytes(v)}`)
      .join(', ') || 'nothing'
  );
}
