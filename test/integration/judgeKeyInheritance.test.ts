// The judge's key never reaches a program a run starts (issue 51), through the real processes: the
// host's run manager forks the built run worker, whose run starts an OpenEnv server's command (the
// cheapest program a run starts: it prints which variables it inherited and exits, so the run fails with
// its output in the reason). An unjudged run's worker is not handed the stored key at all; a judged
// run's worker is, and takes it (and the variable its config's apiKeyEnv names) out of its environment
// before the environment starts anything.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { BackendClient } from '../../src/host/processes/backendClient';
import { RunManager } from '../../src/host/processes/runManager';
import { resolveRuntime } from '../../src/host/processes/runtime';
import { ROOT, tempDir } from '../helpers/cli';

const CANARY = 'sk-inherit-canary-0b7e41';
const OTHER = 'AGENT_RL_TEST_OTHER_JUDGE_KEY';
const HANDED = 'AGENT_RL_TEST_HANDED';

const cleanups: (() => void)[] = [];
after(() => cleanups.forEach((c) => c()));

async function setup() {
  const r = await resolveRuntime(
    { configured: '', execPath: process.execPath, versions: process.versions, pathEnv: '', platform: process.platform },
    path.join(ROOT, 'dist', 'probe.js'),
  );
  if (!r.runtime) throw new Error(`no runtime: ${r.rejected.join(' ')}`);
  const dir = tempDir();
  const db = path.join(dir, 'runs.sqlite');
  fs.writeFileSync(
    path.join(dir, 'probe.mjs'),
    `const seen = (n) => (process.env[n] === undefined ? 'unset' : 'set');\nconsole.log(\`judge-key=\${seen('AGENT_RL_JUDGE_API_KEY')} other-key=\${seen('${OTHER}')} handed=\${seen('${HANDED}')}\`);\nprocess.exit(3);\n`,
  );
  const backend = new BackendClient({ runtime: r.runtime, script: path.join(ROOT, 'dist', 'backend.js'), onStderr: () => undefined }, db);
  const manager = new RunManager({
    // what the extension hands a judged run's worker: the stored key (and a marker that shows it was handed)
    fork: {
      runtime: r.runtime,
      script: path.join(ROOT, 'dist', 'worker.js'),
      onStderr: () => undefined,
      extraEnv: () => ({ AGENT_RL_JUDGE_API_KEY: CANARY, [HANDED]: '1' }),
    },
    backend,
    heartbeatTimeoutMs: 60_000,
  });
  cleanups.push(
    () => backend.dispose(),
    () => manager.dispose(),
  );
  return { dir, db, manager };
}

/** What the run's program printed about its environment, from the run's failure. */
async function seenBy(manager: RunManager, db: string, dir: string, judge?: Record<string, unknown>): Promise<string> {
  const config = {
    env: 'openenv',
    policy: 'transformer',
    iterations: 1,
    envOptions: { root: dir, command: [process.execPath, 'probe.mjs'], startTimeoutMs: 60_000 },
    ...(judge ? { reward: { judge: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm', rubric: 'r', ...judge } } } : {}),
  };
  const outcome = await manager.start(config, db).done;
  assert.equal(outcome.kind, 'failed', JSON.stringify(outcome));
  const reason = outcome.kind === 'failed' ? outcome.reason : '';
  assert.ok(!reason.includes(CANARY), reason);
  const m = /judge-key=\w+ other-key=\w+ handed=\w+/.exec(reason);
  assert.ok(m, `the program ran and its output is in the reason: ${reason}`);
  return m[0];
}

describe("the judge's key and the programs a run starts", () => {
  it('reaches neither an unjudged nor a judged run’s program; only a judged run’s worker is handed it', async () => {
    const { dir, db, manager } = await setup();
    const saved = process.env[OTHER];
    process.env[OTHER] = `${CANARY}-other`; // in the host's environment, so every worker inherits it
    try {
      // unjudged: the worker is not handed the stored key (nor anything else the host adds for a judge)
      assert.equal(await seenBy(manager, db, dir), 'judge-key=unset other-key=set handed=unset');
      // judged, the default variable: handed to the worker, which took the key before the server started
      assert.equal(await seenBy(manager, db, dir, {}), 'judge-key=unset other-key=set handed=set');
      // judged, apiKeyEnv naming another variable: that one is taken too, and the stored key as well
      assert.equal(await seenBy(manager, db, dir, { apiKeyEnv: OTHER }), 'judge-key=unset other-key=unset handed=set');
    } finally {
      if (saved === undefined) delete process.env[OTHER];
      else process.env[OTHER] = saved;
    }
  });
});
