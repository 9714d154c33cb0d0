// The WebGPU backend (Dawn's Node bindings, the optional `webgpu` package) on a software adapter:
// SwiftShader's Vulkan driver from Debian's chromium package, which .ci/run installs. The tfjs
// decoder's numbers on the qwen3 and qwen2 fixtures (logits, gradients, a prefill and a decoding step)
// must equal wasm's within 1e-4; a forced webgpu without an adapter fails before anything runs, naming what is
// missing and the backend that would be used instead; auto never takes a software adapter.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { CLI, ROOT } from '../helpers/cli';

const PROBE = path.join(__dirname, '..', 'helpers', 'webgpuProbe.js');
const SWIFTSHADER = '/usr/lib/chromium/vk_swiftshader_icd.json';
const SOFTWARE_ENV = {
  VK_ICD_FILENAMES: SWIFTSHADER,
  LD_LIBRARY_PATH: `/usr/lib/chromium${process.env.LD_LIBRARY_PATH ? `:${process.env.LD_LIBRARY_PATH}` : ''}`,
};

function installed(): string | undefined {
  try {
    require.resolve('webgpu', { paths: [ROOT] });
  } catch {
    return 'the optional webgpu package is not installed (npm install)';
  }
  if (!fs.existsSync(SWIFTSHADER)) return `${SWIFTSHADER} is missing (apt-get install chromium)`;
  return undefined;
}

interface Probe {
  backend: string;
  adapter: { software: boolean; vendor: string; description: string } | null;
  notes: string[];
  fullLogits: number[];
  fullGrads: number[];
  sampling: number[];
  hfLogits: number[];
  hfGrads: number[];
}

function run(backend: string, env: Record<string, string>): Probe {
  // The probe prints every logit and gradient it compares (a few MB): far over spawnSync's 1 MiB default.
  const r = spawnSync(process.execPath, [PROBE, '--probe', backend], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 300_000,
    cwd: ROOT,
    maxBuffer: 256 * 1024 * 1024,
  });
  assert.equal(r.status, 0, `probe ${backend} failed (${r.error?.message ?? `signal ${r.signal}`}): ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Probe;
}

function maxDiff(a: number[], b: number[]): number {
  assert.equal(a.length, b.length);
  return a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i]!)), 0);
}

const missing = installed();

describe('the webgpu backend on a software adapter', { skip: missing }, () => {
  it('computes what wasm computes within 1e-4: logits, gradients (full fine-tuning and LoRA), a prefill and a decoding step of the tfjs decoder', () => {
    const gpu = run('webgpu', SOFTWARE_ENV);
    const cpu = run('wasm', {});
    assert.equal(gpu.backend, 'webgpu');
    assert.ok(gpu.adapter?.software, JSON.stringify(gpu.adapter));
    assert.equal(cpu.backend, 'wasm');
    for (const k of ['fullLogits', 'fullGrads', 'sampling', 'hfLogits', 'hfGrads'] as const) {
      const d = maxDiff(gpu[k], cpu[k]);
      console.log(`${k}: ${gpu[k].length} values, max |webgpu − wasm| = ${d.toExponential(2)}`);
      assert.ok(d < 1e-4, `${k}: ${d}`);
    }
  });

  it('auto does not take a software adapter: it says why and uses wasm', () => {
    const auto = run('auto', SOFTWARE_ENV);
    assert.match(auto.backend, /^(wasm|tensorflow)$/);
    assert.ok(
      auto.notes.some((n) => /^webgpu: the only WebGPU adapter is a software one/.test(n)),
      auto.notes.join('\n'),
    );
  });

  it('a forced webgpu with no adapter fails before the run starts, naming what is missing and what would be used instead', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'webgpu-none-'));
    const r = spawnSync(process.execPath, [CLI, 'train', '--env', 'binary-search', '--policy', 'transformer', '--backend', 'webgpu', '--iterations', '1'], {
      encoding: 'utf8',
      cwd: dir,
      env: { ...process.env, VK_ICD_FILENAMES: path.join(dir, 'none.json'), LD_LIBRARY_PATH: '' },
      timeout: 120_000,
    });
    assert.notEqual(r.status, 0);
    assert.match(
      r.stderr,
      /compute backend "webgpu" is not available: Dawn found no WebGPU adapter \((libvulkan\.so\.1 is missing: apt-get install libvulkan1|libvulkan\.so\.1 loads, so no Vulkan driver).*here it would take (wasm|tensorflow)/,
    );
    assert.doesNotMatch(r.stderr, /\n\s+at .*dist\/cli\.js/, 'no stack trace of ours (Dawn prints where it looked for Vulkan)');
    assert.ok(
      !fs.existsSync(path.join(dir, '.agent-rl', 'runs.sqlite')) ||
        !/run 1/.test(spawnSync(process.execPath, [CLI, 'runs'], { encoding: 'utf8', cwd: dir }).stdout),
      'no run was stored',
    );
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
