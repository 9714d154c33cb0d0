// The Q8_0 quantizer against llama.cpp's own, taken from the llama.cpp source that node-llama-cpp
// ships (its git bundle), compiled with the system's C compiler and run on the same float32 rows:
// for weights quantize_row_q8_0_ref with ggml's float32 → float16 conversion (what llama-quantize and
// the GGUF writer store), for activations ggml-cpu's x86 quantize_row_q8_0 (AVX2 and F16C: what
// llama.cpp quantizes every product's input with at run time on this architecture). The GGUF bytes of
// the TypeScript quantizer and of the wasm kernel must equal llama.cpp's byte for byte — ties,
// float16-subnormal, zero and infinite scales included. Skipped where the bundle, git or a C compiler
// is missing (and the activation case off x86-64 or without AVX2 and F16C).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { EngineMemory } from '../../../../../../src/rl/policies/lm/models/engine/engineMemory';
import { Q8Kernels, q8Operand } from '../../../../../../src/rl/policies/lm/models/engine/q8Kernels';
import { encodeGgufQ8_0, q8Layout, quantizeQ8, type Q8Quantizer } from '../../../../../../src/rl/policies/lm/models/q8Blocks';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..', '..', '..', '..');
const BUNDLE = path.join(ROOT, 'node_modules', 'node-llama-cpp', 'llama', 'gitRelease.bundle');
const ok = (cmd: string, args: string[]): boolean => spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
const skip = !fs.existsSync(BUNDLE)
  ? `no llama.cpp source (${path.relative(ROOT, BUNDLE)})`
  : !ok('git', ['--version'])
    ? 'no git'
    : !ok('cc', ['--version'])
      ? 'no C compiler (cc)'
      : false;
const cpuFlags = fs.existsSync('/proc/cpuinfo') ? fs.readFileSync('/proc/cpuinfo', 'utf8') : '';
const skipX86 =
  skip ||
  (process.arch !== 'x64' ? `not x86-64 (${process.arch})` : !/\bavx2\b/.test(cpuFlags) || !/\bf16c\b/.test(cpuFlags) ? 'no AVX2 and F16C here' : false);

/** The text from `start` to the end of the function it begins (the first line that is "}"). */
function cut(source: string, start: string): string {
  const a = source.indexOf(start);
  const b = source.indexOf('\n}\n', a);
  if (a < 0 || b < 0) throw new Error(`llama.cpp source: ${start} not found`);
  return source.slice(a, b + 3);
}

/** The float32 rows both cases quantize: magnitudes 1e−12 … 1e11 (float16-subnormal, zero and infinite scales), every fifth row many ties. */
function rows(): { x: Float32Array; rows: number; cols: number } {
  let seed = 7;
  const rand = (): number => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed / 4294967296 - 0.5;
  };
  const rows = 400,
    cols = 896;
  const x = new Float32Array(rows * cols);
  for (let i = 0; i < x.length; i++) {
    const r = Math.floor(i / cols),
      b = Math.floor((i % cols) / 32);
    const mag = 10 ** (((r * 7 + b) % 24) - 12);
    x[i] = (r % 5 === 0 ? Math.round(rand() * 64) / 8 : rand()) * mag;
  }
  return { x, rows, cols };
}

/**
 * Compiles `fn` (a `void fn(const float *, void *, int64_t)` cut from the bundle's `file`, after
 * `prelude`) with a main that quantizes a file of float32 into block_q8_0s, runs it on `x` and returns
 * the bytes.
 */
function llamaCppBytes(x: Float32Array, file: string, fn: string, prelude: (show: (f: string) => string) => string[], cflags: string[]): Uint8Array {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-q8-'));
  try {
    execFileSync('git', ['clone', '-q', '--no-checkout', BUNDLE, path.join(dir, 'src')]);
    const show = (f: string): string => execFileSync('git', ['-C', path.join(dir, 'src'), 'show', `HEAD:${f}`], { encoding: 'utf8', maxBuffer: 1 << 26 });
    const c = [
      '#include <assert.h>\n#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>',
      'typedef uint16_t ggml_half; typedef uint16_t ggml_fp16_t;',
      '#define QK8_0 32\ntypedef struct { ggml_half d; int8_t qs[QK8_0]; } block_q8_0;',
      '#define MAX(a, b) ((a) > (b) ? (a) : (b))\n#define GGML_RESTRICT',
      ...prelude(show),
      cut(show(file), `void ${fn}(`),
      `int main(int argc, char **argv) {
  FILE *f = fopen(argv[1], "rb"); fseek(f, 0, SEEK_END); long n = ftell(f) / 4; fseek(f, 0, SEEK_SET);
  float *x = malloc(n * 4); if (fread(x, 4, n, f) != (size_t)n) return 1; fclose(f);
  block_q8_0 *y = malloc(n / 32 * sizeof(block_q8_0)); ${fn}(x, y, n);
  FILE *o = fopen(argv[2], "wb"); fwrite(y, sizeof(block_q8_0), n / 32, o); fclose(o); return sizeof(block_q8_0) == 34 ? 0 : 2;
}`,
    ].join('\n\n');
    fs.writeFileSync(path.join(dir, 'q8.c'), c);
    execFileSync('cc', ['-O1', ...cflags, '-o', path.join(dir, 'q8'), path.join(dir, 'q8.c'), '-lm']);
    fs.writeFileSync(path.join(dir, 'x.bin'), x);
    execFileSync(path.join(dir, 'q8'), [path.join(dir, 'x.bin'), path.join(dir, 'y.bin')]);
    return new Uint8Array(fs.readFileSync(path.join(dir, 'y.bin')));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The GGUF bytes of the TypeScript quantizer and of the wasm kernel, each against llama.cpp's `want`. */
function assertBothQuantize(x: Float32Array, rows: number, cols: number, kind: Q8Quantizer, want: Uint8Array): void {
  assert.deepEqual(encodeGgufQ8_0(quantizeQ8(x, rows, cols, kind)), want, 'TypeScript');
  const mem = new EngineMemory(16 * 2 ** 20, 'test plan');
  const k = new Q8Kernels(mem.memory);
  const xp = mem.allocF32(x.length, 'x');
  mem.f32.set(x, xp / 4);
  const op = q8Operand(mem.alloc(q8Layout(rows, cols).bytes, 'q'), rows, cols);
  k.quantize(xp, cols, op, kind);
  const kernel = {
    layout: op.layout,
    q: new Int8Array(mem.memory.buffer.slice(op.q, op.q + op.layout.valueBytes)),
    scales: mem.f32.slice(op.s / 4, op.s / 4 + op.layout.scaleBytes / 4),
  };
  assert.deepEqual(encodeGgufQ8_0(kernel), want, `wasm kernel (${k.build})`);
}

describe('Q8_0 against llama.cpp', () => {
  it("quantizes weights to llama.cpp's bytes (quantize_row_q8_0_ref), in TypeScript and in the wasm kernel", { skip }, () => {
    const { x, rows: M, cols } = rows();
    const want = llamaCppBytes(
      x,
      'ggml/src/ggml-quants.c',
      'quantize_row_q8_0_ref',
      (show) => {
        const impl = show('ggml/src/ggml-impl.h');
        return [
          '#define GGML_FP32_TO_FP16(x) ggml_compute_fp32_to_fp16(x)',
          cut(impl, 'static inline float fp32_from_bits('),
          cut(impl, 'static inline uint32_t fp32_to_bits('),
          cut(impl, 'static inline ggml_fp16_t ggml_compute_fp32_to_fp16('),
        ];
      },
      [],
    );
    assertBothQuantize(x, M, cols, 'weight', want);
  });

  it(
    "quantizes activations to llama.cpp's bytes on x86 (ggml-cpu's quantize_row_q8_0, AVX2 and F16C), in TypeScript and in the wasm kernel",
    { skip: skipX86 },
    () => {
      const { x, rows: M, cols } = rows();
      // GGML_CPU_FP32_TO_FP16 is F16C's conversion (round to nearest even) on x86 (ggml-cpu/simd-mappings.h)
      const want = llamaCppBytes(
        x,
        'ggml/src/ggml-cpu/arch/x86/quants.c',
        'quantize_row_q8_0',
        () => ['#include <immintrin.h>', '#define GGML_CPU_FP32_TO_FP16(x) _cvtss_sh(x, 0)'],
        ['-mavx2', '-mf16c'],
      );
      assertBothQuantize(x, M, cols, 'activation', want);
    },
  );
});
