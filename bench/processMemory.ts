// The bench process's own memory, as the kernel counts it (Linux /proc/self/status), for
// bench/seed000Scale.ts (issue 50: the OOM killer took the bench while a PyTorch float32 server trained
// beside it). RSS splits into anonymous pages (JS heaps, wasm memories, llama.cpp's contexts: what the
// OOM killer weighs) and file pages (mmap'd GGUFs, code: the kernel can drop them). The peak is
// VmHWM, which writing "5" to /proc/self/clear_refs resets (Linux ≥ 4.0), so a turn's peak is its own.
import * as fs from 'node:fs';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { formatBytes } from '../src/rl/policies/lm/models/memoryPlan';

export interface ProcessMemory {
  /** Bytes resident now (VmRSS), of them anonymous (RssAnon) and file-backed (RssFile + RssShmem). */
  rss: number;
  anon: number;
  file: number;
  /** Peak resident bytes since the last resetPeakRss (VmHWM). */
  peak: number;
  /** V8's heap in use and the bytes of ArrayBuffers outside it (process.memoryUsage()). */
  heap: number;
  arrayBuffers: number;
}

/** Reads /proc/self/status (kB fields); zeros off Linux, where the bench prints what Node gives. */
export function processMemory(): ProcessMemory {
  const u = process.memoryUsage();
  const out: ProcessMemory = { rss: u.rss, anon: 0, file: 0, peak: 0, heap: u.heapUsed, arrayBuffers: u.arrayBuffers };
  let status: string;
  try {
    status = fs.readFileSync('/proc/self/status', 'utf8');
  } catch {
    return out;
  }
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { ...out, rss: kb('VmRSS') || u.rss, anon: kb('RssAnon'), file: kb('RssFile') + kb('RssShmem'), peak: kb('VmHWM') };
}

/** Starts a new peak (VmHWM := VmRSS); false where the kernel does not allow it (the peak then runs on). */
export function resetPeakRss(): boolean {
  try {
    fs.writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}

/** "rss 3.1 GiB (anon 2.9 GiB, file 210 MiB), peak 3.4 GiB; JS heap 80 MiB, ArrayBuffers 12 MiB". */
export function describeMemory(m: ProcessMemory = processMemory()): string {
  return (
    `rss ${formatBytes(m.rss)} (anon ${formatBytes(m.anon)}, file ${formatBytes(m.file)}), peak ${formatBytes(m.peak)}; ` +
    `JS heap ${formatBytes(m.heap)}, ArrayBuffers ${formatBytes(m.arrayBuffers)}`
  );
}

/**
 * A full garbage collection where the bench can ask for one (V8's --expose-gc, set at run time): large
 * Float32Arrays dropped by the bench are otherwise freed only when V8 next feels heap pressure, which
 * the wasm memories and PyTorch's server beside it do not cause. Untimed: called between turns.
 */
export function collectGarbage(): void {
  gc ??= exposedGc();
  gc();
}
let gc: (() => void) | undefined;
function exposedGc(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}
