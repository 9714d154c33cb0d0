// Cached Python virtual environments for the field's packages (verifiers, …) that tests and scripts
// run against: one folder per name and pinned requirement list, under
// ~/.cache/agent-rl-workbench/venvs/<name> (AGENT_RL_VENVS overrides the parent folder), made once with
// `python -m venv` and `pip install`, and reused while its stamp file names the same requirements. Never
// run by `npm test` (it only looks for the folder; .ci/run makes it):
//   node scripts/pythonVenv.mjs verifiers-0.3.1    # the named set below; prints the venv's python
//   node scripts/pythonVenv.mjs --path verifiers   # prints where it would be, installs nothing
// From another script: `import { ensureVenv, venvPython, VENV_SETS } from './pythonVenv.mjs'`.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The named sets: venv name → pinned requirements. The name carries the version, so that a new pin
 * makes a new folder and a test names the one it was written against.
 * @type {Readonly<Record<string, readonly string[]>>}
 */
export const VENV_SETS = {
  // verifiers 0.3.1 (Prime Intellect's environment format: load_environment(**kwargs) → vf.Environment
  // with a dataset and a vf.Rubric, the API 0.4.0 replaced by verifiers.v1's tasksets and harnesses):
  // src/rl/envs/verifiers, test/fixtures/verifiers
  'verifiers-0.3.1': ['verifiers==0.3.1'],
  // verifiers 0.4.0 (verifiers.v1: a module exports a vf.Taskset; the same harness reads it, see
  // docs/verifiers.md), with uv, which 0.4 runs its chat harness with (a PEP 723 script whose packages
  // uv fetches from PyPI on first use): src/rl/envs/verifiers, test/fixtures/verifiers/vf04_*.py
  'verifiers-0.4.0': ['verifiers==0.4.0', 'uv==0.13.10'],
  // openenv-core 0.3.0 (Meta / Hugging Face's OpenEnv: an environment as a FastAPI server with reset,
  // step and state over HTTP and a WebSocket /ws session): src/rl/envs/openenv, test/fixtures/openenv
  'openenv-core-0.3.0': ['openenv-core==0.3.0'],
  // reasoning-gym 0.1.25 (procedural reasoning tasks, each dataset with its own score_answer and
  // difficulty parameters): the workspace environment's taskSet "reasoning-gym:<dataset>",
  // src/rl/envs/reasoningGym
  'reasoning-gym-0.1.25': ['reasoning-gym==0.1.25'],
};

/** The folder the venvs live in. */
export function venvRoot() {
  return process.env.AGENT_RL_VENVS || path.join(os.homedir(), '.cache', 'agent-rl-workbench', 'venvs');
}

/** A venv's interpreter (whether or not it exists yet). @param {string} name */
export function venvPython(name) {
  const dir = path.join(venvRoot(), name);
  return process.platform === 'win32' ? path.join(dir, 'Scripts', 'python.exe') : path.join(dir, 'bin', 'python');
}

const stampOf = (/** @type {readonly string[]} */ requirements) => `${[...requirements].sort().join('\n')}\n`;

/**
 * Makes the venv `name` with `requirements` (pip requirement strings) unless it is there with the
 * same ones already; returns its python. `python` is the interpreter it is made from (default
 * $AGENT_RL_PYTHON, else python3). Throws with pip's output when an install fails; a half-made
 * folder is removed, so the next call starts over.
 * @param {string} name
 * @param {readonly string[]} requirements
 * @param {{ python?: string, log?: (m: string) => void }} [options]
 */
export function ensureVenv(name, requirements, { python = process.env.AGENT_RL_PYTHON || 'python3', log = (m) => process.stderr.write(`${m}\n`) } = {}) {
  if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new Error(`venv name ${JSON.stringify(name)}: use letters, digits, '.', '_' and '-'`);
  const dir = path.join(venvRoot(), name);
  const stamp = path.join(dir, 'agent-rl-requirements.txt');
  const py = venvPython(name);
  if (fs.existsSync(py) && fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === stampOf(requirements)) return py;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const run = (/** @type {string} */ cmd, /** @type {string[]} */ args) => {
    log(`pythonVenv: ${cmd} ${args.join(' ')}`);
    const r = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'] });
    if (r.status !== 0) {
      fs.rmSync(dir, { recursive: true, force: true });
      throw new Error(`pythonVenv: ${cmd} ${args.join(' ')} failed (${r.error ? r.error.message : `exit ${r.status}`})`);
    }
  };
  run(python, ['-m', 'venv', dir]);
  run(py, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...requirements]);
  fs.writeFileSync(stamp, stampOf(requirements));
  return py;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const only = args[0] === '--path';
  const names = only ? args.slice(1) : args;
  if (names.length === 0 || names.some((n) => !(n in VENV_SETS))) {
    process.stderr.write(`usage: node scripts/pythonVenv.mjs [--path] NAME…  (names: ${Object.keys(VENV_SETS).join(', ')})\n`);
    process.exit(2);
  }
  for (const n of names) process.stdout.write(`${only ? venvPython(n) : ensureVenv(n, VENV_SETS[n] ?? [])}\n`);
}
