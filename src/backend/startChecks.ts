// What Start Run checks before a run starts (issues 51 and 53), in the backend because the checks read
// model folders and start an interpreter, which the VS Code side never does itself: a distillation
// teacher's tokenizer against the student's (the run would fail on it when its teacher loads, with the
// same message), and whether the Python a verifiers environment would run on can import verifiers (the
// run would fail on it when its environment loads, after the worker and the policy started).
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { BackendMethods } from '../shared/protocol/backendProtocol';
import { verifiersPython } from '../rl/envs/verifiers/verifiersEnv';
import { checkSameTokenizer } from '../rl/policies/teacher';
import { ModelLoadError } from '../rl/policies/lm/models/hfConfig';

/** Why `teacher` cannot score `model`'s token ids (the run's own message), or null when it can. */
export function teacherProblem(model: string, teacher: string): string | null {
  try {
    checkSameTokenizer(path.resolve(model), path.resolve(teacher));
    return null;
  } catch (e) {
    if (e instanceof ModelLoadError) return e.message;
    throw e;
  }
}

/** How long importing verifiers (and the datasets and openai packages it loads) may take: seconds on a laptop, more on a loaded machine. */
const IMPORT_TIMEOUT_MS = 45_000;

/** What the interpreter prints: verifiers' version (its package has no __version__ in some releases). */
const PROBE =
  'import importlib.metadata as m, verifiers\ntry:\n    print(m.version("verifiers"))\nexcept Exception:\n    print(getattr(verifiers, "__version__", "unknown"))\n';

/**
 * The Python a verifiers environment would run on (resolved as the run resolves it: `python`, else
 * $AGENT_RL_VERIFIERS_PYTHON, else the cached venv, else python3) and verifiers' version there, or why
 * it cannot import verifiers: the interpreter's last stderr line (ModuleNotFoundError: …).
 */
export async function verifiersCheck(python: string, root: string): Promise<BackendMethods['checkVerifiers']['result']> {
  let resolved: string;
  try {
    resolved = verifiersPython({ python }, root !== '' && fs.existsSync(root) ? root : os.tmpdir());
  } catch (e) {
    return { python, version: null, problem: (e as Error).message };
  }
  return new Promise((resolve) => {
    // run outside the module's folder: this checks the interpreter, not the user's code
    execFile(resolved, ['-c', PROBE], { cwd: os.tmpdir(), timeout: IMPORT_TIMEOUT_MS, encoding: 'utf8', maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (!err) {
        resolve({ python: resolved, version: stdout.trim().split('\n').pop() ?? 'unknown', problem: null });
        return;
      }
      const last = stderr.trim().split('\n').pop()?.slice(0, 300) ?? '';
      const why = err.killed ? `no answer within ${IMPORT_TIMEOUT_MS / 1000} s` : last || err.message.slice(0, 300);
      resolve({ python: resolved, version: null, problem: `this Python (${resolved}) cannot import verifiers (${why})` });
    });
  });
}
