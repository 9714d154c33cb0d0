// "Re-run in Sandbox": a stored run is data, not instructions. The interpreter and the isolation level
// come from the user's settings (sent by the host with each request), never from the stored config,
// which a shared or imported database can set to any binary and the weakest level; the stored limits
// are used only within the ranges a run config may ask for. When the run had used another level or
// named another interpreter, the answer says so.
import * as fs from 'node:fs';
import { codeEnvOptions, formatExecution, type CodeEnvOptions } from '../rl/envs/codeSandbox/codeEnv';
import { ISOLATION_LEVELS, type IsolationLevel } from '../rl/sandbox/isolation';
import type { SandboxPools } from '../rl/sandbox/sandboxPools';
import type { BackendMethods } from '../shared/protocol/backendProtocol';
import { CODE_OPTION_SPECS, isSandboxLevel, validateEnvOptions } from '../shared/runConfig';

/** agentRl.pythonPath ('' = the default interpreter) and agentRl.sandboxLevel ('auto' = strongest available). */
export interface SandboxSettings {
  readonly python: string;
  readonly sandbox: string;
}

const LIMIT_KEYS = ['timeoutMs', 'tailBytes', 'outputCapBytes'] as const;

/** Options of a re-run: the user's interpreter and level; the stored limits clamped to the validator's ranges. */
export function rerunOptions(stored: Readonly<Record<string, unknown>>, settings: SandboxSettings): CodeEnvOptions {
  const limits: Record<string, number> = {};
  for (const k of LIMIT_KEYS) {
    const spec = CODE_OPTION_SPECS[k];
    const v = stored[k];
    if (typeof v === 'number' && Number.isFinite(v)) limits[k] = Math.min(spec.max, Math.max(spec.min, v));
  }
  const sandbox = isSandboxLevel(settings.sandbox) ? settings.sandbox : 'auto';
  return codeEnvOptions(validateEnvOptions('code', { ...limits, sandbox, python: settings.python, poolSize: 1 }));
}

const strength = (level: string): number => ISOLATION_LEVELS.indexOf(level as IsolationLevel); // 0 = strongest, -1 = unknown

const realpath = (p: string): string => {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
};

/**
 * What the stored run asked for that this re-run did not use. `storedLevel`: the level the turn ran at
 * (its observation records it), else the one its config demanded; `storedPython`: its config's interpreter.
 */
export function rerunNotes(
  stored: { readonly level?: unknown; readonly python?: unknown },
  used: { readonly level: IsolationLevel; readonly python: string },
): string[] {
  const notes: string[] = [];
  if (typeof stored.level === 'string' && stored.level !== used.level && stored.level !== 'auto') {
    const s = strength(stored.level);
    notes.push(
      s < 0
        ? `the run recorded an unknown sandbox level "${stored.level}"; this re-run used "${used.level}" from your settings`
        : s > strength(used.level)
          ? `the run used the weaker sandbox level "${stored.level}"; this re-run used "${used.level}" from your settings (agentRl.sandboxLevel)`
          : `the run used the stronger sandbox level "${stored.level}"; this re-run used "${used.level}", from your agentRl.sandboxLevel`,
    );
  }
  if (typeof stored.python === 'string' && stored.python !== '' && realpath(stored.python) !== used.python) {
    notes.push(`the run named the interpreter "${stored.python}", which was not used: this re-run used ${used.python} (agentRl.pythonPath, or the default)`);
  }
  return notes;
}

/** Runs one recorded turn's code again now with the user's sandbox settings, in the backend's pools, and compares the observation. */
export async function rerunTurn(
  code: string,
  storedObservation: { readonly text: string; readonly level?: unknown },
  storedEnvOptions: Readonly<Record<string, unknown>>,
  settings: SandboxSettings,
  pools: SandboxPools,
): Promise<BackendMethods['rerun']['result']> {
  const options = rerunOptions(storedEnvOptions, settings);
  const sandbox = pools.get(options);
  const r = await sandbox.executor.execute(code, options.limits);
  const observationText = formatExecution(r);
  const notes = rerunNotes(
    { level: storedObservation.level ?? storedEnvOptions.sandbox, python: storedEnvOptions.python },
    { level: r.level, python: sandbox.python },
  );
  return { observationText, same: observationText === storedObservation.text, level: r.level, python: sandbox.python, notes };
}
