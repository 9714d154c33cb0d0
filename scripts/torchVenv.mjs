#!/usr/bin/env node
// @ts-check
// PyTorch 2.15 from PyPI for the benches' baseline (bench/torchServer.ts), beside Debian's 1.13: a
// cached virtual environment at ~/.cache/agent-rl-workbench/venvs/torch-2.15.0 (AGENT_RL_VENVS
// overrides the parent folder), made once and reused while its stamp file names the same
// requirements. Never a dependency of the extension or of `npm test`: only `npm run bench` calls it.
//   node scripts/torchVenv.mjs          # makes it where missing; prints the venv's python
//   node scripts/torchVenv.mjs --path   # prints where it would be, installs nothing
//
// The leanest install that imports and runs on the CPU. PyPI's Linux wheel of torch 2.15 is its CUDA
// 13 build, and its requirements pull the whole CUDA toolkit, triton and cuda-bindings (≈ 5 GB). Its
// own libraries (libtorch_cpu, libtorch_cuda, libtorch_python, libc10_cuda: `readelf -d`) name CUDA
// libraries the loader must find even on a machine without a GPU, so torch is installed without its
// requirements and then exactly the packages that hold those libraries (at the versions torch 2.15.0
// pins), plus its pure-Python requirements and numpy (torch_baseline.py reads safetensors through it).
// Left out, and not needed to import torch or run it on the CPU: triton (torch.compile's GPU code
// generator), cuda-bindings, cuda-pathfinder, cusolver (loaded lazily by CUDA linear algebra), nvtx,
// nvjitlink, cccl, the cuda-toolkit meta-package and a newer setuptools (torch.utils.cpp_extension's;
// pip warns that the venv's 66.1 is older). The result is about 4 GB on disk, made in ~3 min here.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

export const TORCH_VENV = 'torch-2.15.0';

/** Installed with --no-deps: torch and the CUDA libraries its own libraries load (DT_NEEDED). */
const NO_DEPS = [
  'torch==2.15.0',
  'nvidia-cuda-runtime==13.2.86', // libcudart.so.13
  'nvidia-cublas==13.4.1.3', // libcublas.so.13, libcublasLt.so.13
  'nvidia-cusparse==12.7.10.12', // libcusparse.so.12
  'nvidia-cufft==12.2.0.57', // libcufft.so.12
  'nvidia-cufile==1.17.1.22', // libcufile.so.0
  'nvidia-cusparselt-cu13==0.8.1', // libcusparseLt.so.0
  'nvidia-nccl-cu13==2.30.7', // libnccl.so.2
  'nvidia-cudnn-cu13==9.26.0.51', // libcudnn.so.9
  'nvidia-cuda-nvrtc==13.2.86', // libnvrtc.so.13
  'nvidia-cuda-cupti==13.2.86', // libcupti.so.13
  'nvidia-nvshmem-cu13==3.7.2', // libtorch_nvshmem.so's
];
/** Installed with their own requirements: torch's pure-Python requirements and numpy. */
const WITH_DEPS = ['filelock', 'typing-extensions>=4.13.0', 'sympy>=1.13.3', 'networkx>=2.5.1', 'jinja2', 'fsspec>=0.8.5', 'numpy'];

/** The folder the venvs live in (shared with the other cached Python environments of the project). */
export function venvRoot() {
  return process.env.AGENT_RL_VENVS || path.join(os.homedir(), '.cache', 'agent-rl-workbench', 'venvs');
}

/** The venv's interpreter, whether or not it exists yet. */
export function torchVenvPython() {
  return path.join(venvRoot(), TORCH_VENV, 'bin', 'python');
}

const STAMP = `${[...NO_DEPS, '--', ...WITH_DEPS].join('\n')}\n`;

/**
 * Makes the venv unless it is there with the same requirements; returns its python. `python` is the
 * interpreter it is made from (default $AGENT_RL_PYTHON, else Debian's /usr/bin/python3, the 1.13
 * side's). Throws with the failing command when an install fails; a half-made folder is removed.
 */
export function ensureTorchVenv({
  python = process.env.AGENT_RL_PYTHON || '/usr/bin/python3',
  log = (/** @type {string} */ m) => process.stderr.write(`${m}\n`),
} = {}) {
  const dir = path.join(venvRoot(), TORCH_VENV);
  const stamp = path.join(dir, 'agent-rl-requirements.txt');
  const py = torchVenvPython();
  if (fs.existsSync(py) && fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === STAMP) return py;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  /** @param {string} cmd @param {string[]} args */
  const run = (cmd, args) => {
    log(`torchVenv: ${cmd} ${args.join(' ')}`);
    const r = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'] });
    if (r.status !== 0) {
      fs.rmSync(dir, { recursive: true, force: true });
      throw new Error(`torchVenv: ${cmd} ${args.join(' ')} failed (${r.error ? r.error.message : `exit ${r.status}`})`);
    }
  };
  const pip = ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check'];
  run(python, ['-m', 'venv', dir]);
  run(py, [...pip, '--no-deps', ...NO_DEPS]);
  run(py, [...pip, ...WITH_DEPS]);
  // imports and multiplies on the CPU, else the venv is not kept
  run(py, ['-c', 'import torch; a = torch.ones(64, 64); assert float((a @ a)[0, 0]) == 64.0; print("torch", torch.__version__, "on the CPU")']);
  fs.writeFileSync(stamp, STAMP);
  return py;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.write(`${process.argv.includes('--path') ? torchVenvPython() : ensureTorchVenv()}\n`);
}
