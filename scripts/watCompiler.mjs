// @ts-check
// WebAssembly text → binary with wabt (a devDependency), SIMD enabled. Shared by the kernel build and
// the test that checks the committed binaries against their sources.
import * as fs from 'node:fs';
import wabtInit from 'wabt';

/** @param {string} file @returns {Promise<Uint8Array>} */
export async function compileWat(file) {
  const wabt = await wabtInit();
  const module = wabt.parseWat(file, fs.readFileSync(file, 'utf8'), { simd: true });
  try {
    module.validate();
    return new Uint8Array(module.toBinary({}).buffer);
  } finally {
    module.destroy();
  }
}
