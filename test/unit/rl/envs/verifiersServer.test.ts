// The verifiers environment's run process as the episodes see it (src/rl/envs/verifiers/verifiersServer.ts),
// without verifiers: a stand-in harness speaking the same protocol (ready, then JSON lines tagged with
// each episode's id) shows that each episode hears only its own output and exit, that stopping one
// cancels it alone, that a process that dies ends every episode still open with its stderr, and that a
// process that fails before it is ready rejects with the error made from its last stderr line.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { EpisodeExit, EpisodeListener } from '../../../../src/rl/envs/agent/episodeProcess';
import { VerifiersServer } from '../../../../src/rl/envs/verifiers/verifiersServer';
import { resolvePython } from '../../../../src/rl/sandbox/isolation';
import { tempDir } from '../../../helpers/cli';

/** The protocol's answers, played by the task's id: "ok" answers, "hang" waits to be stopped, "die" ends the process. */
const STAND_IN = `
import json, sys
cfg = json.loads(sys.argv[1])
if cfg.get("fail"):
    sys.stderr.write("a traceback line\\nverifiers environment m: import failed (boom). Fix: fix it\\n")
    sys.exit(3)
def answer(m):
    sys.stdout.write(json.dumps(m) + "\\n")
    sys.stdout.flush()
answer({"ready": True})
for line in sys.stdin:
    m = json.loads(line)
    if m["op"] == "start":
        kind = m["task"]["id"]
        if kind == "die":
            sys.stderr.write("the environment crashed\\n")
            sys.exit(9)
        if kind == "ok":
            answer({"id": m["id"], "stderr": "a warning\\n"})
            answer({"id": m["id"], "stdout": json.dumps({"reward": 1, "url": m["baseUrl"], "key": m["key"]}) + "\\n"})
            answer({"id": m["id"], "exit": 0})
    elif m["op"] == "stop":
        answer({"id": m["id"], "exit": None})
`;

const servers: VerifiersServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

function start(config: Record<string, unknown> = {}): VerifiersServer {
  const s = new VerifiersServer(resolvePython(), STAND_IN, JSON.stringify(config), tempDir(), (why, last) => new Error(`${why} | ${last}`));
  servers.push(s);
  return s;
}

/** An episode's listener that records what it heard, and its exit as a promise. */
function listener(): { on: EpisodeListener; out: string[]; err: string[]; exit: Promise<EpisodeExit> } {
  const out: string[] = [];
  const err: string[] = [];
  let done: (e: EpisodeExit) => void = () => undefined;
  const exit = new Promise<EpisodeExit>((resolve) => (done = resolve));
  return { on: { stdout: (d) => out.push(d), stderr: (d) => err.push(d), exit: (e) => done(e) }, out, err, exit };
}

const episode = (id: string, n: number) => ({ root: '.', baseUrl: `http://127.0.0.1:1/episodes/${n}/v1`, key: 'k', taskJson: JSON.stringify({ id, row: {} }) });

describe('the verifiers run process (one per run, episodes as its tasks)', () => {
  it('each episode hears its own output and exit; stopping one ends it alone, as stopped', async () => {
    const s = start();
    await s.ready(30_000);
    const hang = listener();
    const hung = s.start(episode('hang', 1), hang.on);
    const ok = listener();
    s.start(episode('ok', 2), ok.on);
    assert.deepEqual(await ok.exit, { code: 0, signal: null });
    assert.deepEqual(ok.err, ['a warning\n']);
    assert.deepEqual(JSON.parse(ok.out.join('')), { reward: 1, url: 'http://127.0.0.1:1/episodes/2/v1', key: 'k' });
    assert.deepEqual(hang.out, [], 'the other episode heard nothing');
    hung.stop();
    assert.deepEqual(await hang.exit, { code: null, signal: 'SIGTERM' });
    await hung.release();
  });

  it('a process that dies ends every episode still open, with the end of its stderr', async () => {
    const s = start();
    await s.ready(30_000);
    const waiting = listener();
    s.start(episode('hang', 1), waiting.on);
    const dying = listener();
    s.start(episode('die', 2), dying.on);
    for (const l of [waiting, dying]) {
      const e = await l.exit;
      assert.match(String(e.error), /the verifiers harness process ended \(exit code 9\)/);
      assert.match(l.err.join(''), /the environment crashed/);
    }
    // an episode started after it ended ends at once, saying why
    const late = listener();
    s.start(episode('ok', 3), late.on);
    assert.match(String((await late.exit).error), /exit code 9/);
  });

  it('a process that fails before it is ready rejects with the error its last stderr line makes', async () => {
    const s = start({ fail: true });
    await assert.rejects(s.ready(30_000), /^Error: exit code 3 \| verifiers environment m: import failed \(boom\)\. Fix: fix it$/);
  });
});
