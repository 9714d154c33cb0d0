// The kernel's Landlock ABI version, read by an unconfined interpreter: what the landlock level's tests
// compare the level's own probe with (0: no Landlock). Independent of src/rl/sandbox/python/confine.py.
import { spawnSync } from 'node:child_process';

export function kernelLandlockAbi(python: string): number {
  const r = spawnSync(python, ['-I', '-S', '-c', 'import ctypes\nprint(max(0, ctypes.CDLL(None).syscall(444, None, 0, 1)))'], { encoding: 'utf8' });
  return Number(r.stdout?.trim() || 0);
}
