#!/usr/bin/env node
// @ts-check
// The peers of `npm run bench peers` (bench/peers.ts): TRL 1.16 (GRPOTrainer) with transformers and peft,
// and verl 0.9.1 as far as its config classes, data loader and reward manager import, on PyTorch 2.15 for
// the CPU. A cached virtual environment at ~/.cache/agent-rl-workbench/venvs/peers-trl-1.16.0-verl-0.9.1
// (AGENT_RL_VENVS overrides the parent folder), made once and reused while its stamp names the same
// requirements. Never a dependency of the extension or of `npm test`: only the bench calls it.
//   node scripts/peersVenv.mjs          # makes it where missing; prints the venv's python
//   node scripts/peersVenv.mjs --path   # prints where it would be, installs nothing
//
// PyTorch is not installed again: a .pth file puts scripts/torchVenv.mjs's venv (the lean CPU install of
// torch 2.15.0, made where missing) on the path, so pip sees torch as installed. Every package that
// requires torch is installed without its requirements (pip would otherwise pull the CUDA toolkit and
// triton that torchVenv.mjs leaves out), then the pure-Python requirements they import, pinned where the
// peers disagree: transformers 5.10.4 (verl 0.9.1 wants < 5.11, TRL 1.16 ≥ 4.56.2) and tensordict 0.10.0
// (verl's ≤ 0.10.0). verl is installed without its requirements too (they name vLLM-era GPU stacks,
// wandb, tensorboard, torchdata): what `verl.trainer.main_ppo`, RLHFDataset and the reward loop import
// on the CPU is ray, hydra-core/omegaconf, codetiming, tensordict (pyvers, cloudpickle, orjson), pillow
// and aiohttp. The versions are the ones resolved when this environment was first made here (Dec 2026).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureTorchVenv, venvRoot } from './torchVenv.mjs';

export const PEERS_VENV = 'peers-trl-1.16.0-verl-0.9.1';

/** Installed with --no-deps: the packages whose requirements name torch (or, for verl, GPU stacks). */
const NO_DEPS = ['trl==1.16.0', 'peft==0.22.0', 'accelerate==1.16.0', 'verl==0.9.1', 'tensordict==0.10.0'];
/** Installed with their own requirements: what the packages above import. */
const WITH_DEPS = [
  'transformers==5.10.4',
  'datasets==5.2.0',
  'psutil==7.2.2',
  'pyvers==0.2.3',
  'cloudpickle==3.1.3',
  'ray==2.60.0',
  'hydra-core==1.3.8',
  'omegaconf==2.3.1',
  'codetiming==1.4.0',
  'pillow==13.0.0',
  'orjson==3.13.0',
  'aiohttp==3.14.5',
];
const STAMP = `${[...NO_DEPS, '--', ...WITH_DEPS].join('\n')}\n`;

/** The venv's interpreter, whether or not it exists yet. */
export function peersVenvPython() {
  return path.join(venvRoot(), PEERS_VENV, 'bin', 'python');
}

/**
 * Makes the venv unless it is there with the same requirements; returns its python. Throws with the
 * failing command when an install fails; a half-made folder is removed.
 */
export function ensurePeersVenv({ log = (/** @type {string} */ m) => process.stderr.write(`${m}\n`) } = {}) {
  const dir = path.join(venvRoot(), PEERS_VENV);
  const stamp = path.join(dir, 'agent-rl-requirements.txt');
  const py = peersVenvPython();
  if (fs.existsSync(py) && fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === STAMP) return py;
  const torchPy = ensureTorchVenv({ log });
  fs.rmSync(dir, { recursive: true, force: true });
  /** @param {string} cmd @param {string[]} args */
  const run = (cmd, args) => {
    log(`peersVenv: ${cmd} ${args.join(' ')}`);
    const r = spawnSync(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
    if (r.status !== 0) {
      fs.rmSync(dir, { recursive: true, force: true });
      throw new Error(`peersVenv: ${cmd} ${args.join(' ')} failed (${r.error ? r.error.message : `exit ${r.status}`})`);
    }
    return r.stdout.trim();
  };
  const purelib = ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'];
  // the same base interpreter as the torch venv (its pyvenv.cfg's home), so that the .pth's packages load
  const home = /^home\s*=\s*(.+)$/m.exec(fs.readFileSync(path.join(path.dirname(path.dirname(torchPy)), 'pyvenv.cfg'), 'utf8'))?.[1]?.trim();
  run(home ? path.join(home, 'python3') : 'python3', ['-m', 'venv', dir]);
  fs.writeFileSync(path.join(run(py, purelib), 'agent-rl-torch.pth'), `${run(torchPy, purelib)}\n`);
  const pip = ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check'];
  run(py, [...pip, '--no-deps', ...NO_DEPS]);
  run(py, [...pip, ...WITH_DEPS]);
  // imports, else the venv is not kept
  log(
    run(py, [
      '-c',
      'import torch, transformers, trl, peft, verl; from trl import GRPOTrainer; from verl.utils.dataset.rl_dataset import RLHFDataset; from verl.trainer.ppo.reward import load_reward_manager; print("torch", torch.__version__, "transformers", transformers.__version__, "trl", trl.__version__, "verl", verl.__version__)',
    ]),
  );
  fs.writeFileSync(stamp, STAMP);
  return py;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.write(`${process.argv.includes('--path') ? peersVenvPython() : ensurePeersVenv()}\n`);
}
