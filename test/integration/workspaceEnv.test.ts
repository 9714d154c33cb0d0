// A workspace environment end to end on real files, real sandboxed Python sessions and the real CLI:
// the same tasks from JSON Lines, CSV and verl's parquet; the errors each bad input gets (and that no
// run row is written); tools that keep state, hang, raise and flood; a reward that breaks its contract.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import type { RunRecord } from '../../src/cli/runRecord';
import { verlParquet } from '../../src/exporters/verl/verlParquet';
import type { VerlRow } from '../../src/exporters/verl/verlTasks';
import { readTaskRecords } from '../../src/rl/envs/workspace/taskFiles';
import { tasksOf } from '../../src/rl/envs/workspace/taskRecords';
import type { RunEnvironment } from '../../src/rl/envs/environment';
import { workspaceEnvironment } from '../../src/rl/envs/workspace/workspaceEnv';
import { Rng } from '../../src/rl/random';
import { validateEnvOptions } from '../../src/shared/runConfig';
import { ROOT, runCli, tempDir } from '../helpers/cli';

const TASKS = Array.from({ length: 12 }, (_, i) => ({
  id: i + 1,
  prompt: `Convert ${i + 2} km to m.`,
  answer: (i + 2) * 1000,
  split: i % 4 === 0 ? 'test' : 'train',
  tests: [`assert convert(${i + 2}) == ${(i + 2) * 1000}`],
}));

const COUNTER_TOOLS = `
_count = 0

def bump(step: int = 1) -> int:
    """Adds step to the episode's counter and returns it."""
    global _count
    _count += step
    return _count

def boom(x: str) -> str:
    """Always raises."""
    raise RuntimeError("boom " + x)

def hang() -> str:
    """Never returns."""
    while True:
        pass

def flood() -> str:
    """Prints 100 MB."""
    for _ in range(100):
        print("y" * 1_000_000)
    return "done"

def flood_fd() -> str:
    """Writes 100 MB to file descriptor 1, around print()."""
    import os
    for _ in range(100):
        os.write(1, b"z" * 1_000_000)
    return "done"
`;

function workspace(files: Record<string, string | Uint8Array>): string {
  const dir = tempDir('agent-rl-ws-');
  for (const [f, c] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.writeFileSync(path.join(dir, f), c);
  }
  return dir;
}

const jsonl = (rows: readonly object[]): string => `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`;

/** Every environment a test opened: disposed at the end (their tool zygotes, reward sessions and pools). */
const opened: RunEnvironment[] = [];
after(async () => {
  await Promise.all(opened.map((e) => e.dispose()));
});

describe('workspace tasks from files', () => {
  it("JSON Lines, CSV and a parquet file in verl's layout give the same tasks", async () => {
    const csv = [
      'id,prompt,answer,split,tests',
      ...TASKS.map((t) => `${t.id},"${t.prompt}",${t.answer},${t.split},"${JSON.stringify(t.tests).replace(/"/g, '""')}"`),
    ].join('\n');
    // as verl's preprocessing writes them: train.parquet and test.parquet, extra_info.index from 0 in each
    const verlRows = (split: string) =>
      TASKS.filter((t) => t.split === split).map((t, i) => ({
        data_source: 'unit',
        agent_name: 'tool_agent',
        prompt: [{ role: 'user', content: t.prompt }],
        ability: 'math',
        reward_model: { style: 'rule', ground_truth: String(t.answer) },
        extra_info: {
          split: t.split,
          index: BigInt(i),
          task_id: `t${t.id}`,
          need_tools_kwargs: false,
          tools_kwargs: { code_interpreter: { create_kwargs: { ground_truth: String(t.answer) } } },
        },
      })) as unknown as VerlRow[];
    const dir = workspace({
      'a/tasks.jsonl': jsonl(TASKS),
      'b/tasks.csv': csv,
      'c/train.parquet': await verlParquet(verlRows('train')),
      'c/test.parquet': await verlParquet(verlRows('test')),
    });
    const load = async (file: string, preset: 'default' | 'verl') =>
      tasksOf(await readTaskRecords(dir, [file]), { preset, fields: {}, heldOutFraction: 0.2, splitSeed: 0 });
    const shape = (s: Awaited<ReturnType<typeof load>>, ids = true) => ({
      train: s.train.map((t) => [...(ids ? [t.id] : []), t.prompt, String(t.data.groundTruth)]),
      heldOut: s.heldOut.map((t) => [...(ids ? [t.id] : []), t.prompt, String(t.data.groundTruth)]),
    });
    const fromJsonl = await load('a/tasks.jsonl', 'default');
    assert.equal(fromJsonl.train.length, 9);
    assert.equal(fromJsonl.heldOut.length, 3);
    assert.deepEqual(shape(await load('b/*.csv', 'default')), shape(fromJsonl));
    const fromVerl = await load('c/*.parquet', 'verl');
    assert.deepEqual(shape(fromVerl, false), shape(fromJsonl, false));
    assert.deepEqual(
      fromVerl.heldOut.map((t) => t.id),
      ['c/test.parquet#1', 'c/test.parquet#2', 'c/test.parquet#3'],
      'ids of the file, as verl restarts its index per file',
    );
    // the verl record keeps its chat messages and its data source
    assert.deepEqual(fromVerl.train[0]!.data.messages, [{ role: 'user', content: TASKS[1]!.prompt }]);
    assert.equal((fromVerl.train[0]!.data.metadata as Record<string, unknown>).data_source, 'unit');
    // the tests of the CSV cell (a JSON list) are the JSON Lines ones
    assert.deepEqual((await load('b/tasks.csv', 'default')).train[0]!.data.privateTests, fromJsonl.train[0]!.data.privateTests);
  });

  it('malformed records and unknown options get errors that name the file, the line or row, the field and the fix', async () => {
    const dir = workspace({
      'bad.jsonl': '{"prompt": "a", "answer": 1}\n{"prompt": "b", answer: 2}\n',
      'noprompt.jsonl': jsonl([{ question: 'a', answer: 1 }]),
      'split.jsonl': jsonl([
        { prompt: 'a', split: 'train' },
        { prompt: 'b', split: 'later' },
      ]),
      'twins.csv': 'id,prompt\n7,a\n7,b\n',
      'ragged.csv': 'id,prompt\n1,a,extra\n',
    });
    const load = async (file: string, fields = {}) =>
      tasksOf(await readTaskRecords(dir, [file]), { preset: 'default', fields, heldOutFraction: 0.5, splitSeed: 0 });
    await assert.rejects(load('bad.jsonl'), /bad\.jsonl line 2: not valid JSON .*Fix: one JSON object per line/);
    await assert.rejects(
      load('noprompt.jsonl'),
      /noprompt\.jsonl line 1: has no prompt field "prompt".*Fix: name the field that holds the prompt in envOptions\.promptField/,
    );
    await assert.rejects(
      load('noprompt.jsonl', { prompt: 'question', groundTruth: 'label' }),
      /line 1: has no field "label" \(envOptions\.groundTruthField\)\. Fix: add it to every record, or set envOptions\.groundTruthField/,
    );
    await assert.rejects(load('split.jsonl'), /split\.jsonl line 2: "split" = "later" is not a split this knows\. Fix: use "train"/);
    await assert.rejects(load('twins.csv'), /twins\.csv row 2: id "7" repeats the id of twins\.csv row 1/);
    await assert.rejects(load('ragged.csv'), /ragged\.csv.*not valid CSV/);
    await assert.rejects(load('missing/*.jsonl'), /"missing\/\*\.jsonl" matches no file/);
    assert.throws(
      () => validateEnvOptions('workspace', { tasks: 'x.jsonl', promptFeild: 'q' }),
      /envOptions\.promptFeild .*is not an option of env "workspace".*promptField/s,
    );
  });
});

describe('workspace tools and rewards', () => {
  /** The workspace in `dir` opened as a run would open it: files read and checked, sandboxes its own. */
  const prepare = async (dir: string, extra: Record<string, unknown> = {}): Promise<RunEnvironment> => {
    const env = await workspaceEnvironment.open(
      validateEnvOptions('workspace', { root: dir, tasks: 'tasks.jsonl', tools: 'tools.py', reward: 'exact_match', timeoutMs: 1500, ...extra }),
    );
    opened.push(env);
    return env;
  };

  it('a tool keeps its state through an episode and starts fresh in the next; bad calls come back as counted errors', async () => {
    const dir = workspace({ 'tasks.jsonl': jsonl(TASKS), 'tools.py': COUNTER_TOOLS });
    const options = await prepare(dir);
    const task = options.tasks().train[0]!;
    const run = async (actions: readonly string[]) => {
      const env = options.create();
      const first = await env.reset(task);
      const steps = [];
      for (const a of actions) steps.push(await env.step(env.parseAction(a)));
      const outcome = await env.verify(new Rng(0));
      await env.close();
      return { first, steps, outcome };
    };
    const a = await run(['<call>bump()</call>', '<call>bump(step=5)</call>', '<call>bump("x")</call>', '<call>nope(1)</call>', '<call>boom("a")</call>']);
    assert.match(a.first.text, /^Tools: bump\(step: integer = 1\); boom\(x: string\); hang\(\); flood\(\); flood_fd\(\)\nConvert 3 km to m\.\n$/);
    assert.deepEqual(
      a.steps.slice(0, 2).map((s) => s.observation.text),
      ['<obs>1</obs>', '<obs>6</obs>'],
    );
    assert.match(a.steps[2]!.observation.text, /^<obs>error: bump: argument step must be integer, got 'x'<\/obs>$/);
    assert.match(a.steps[3]!.observation.text, /unknown tool "nope"; the tools are: bump, boom, hang, flood, flood_fd/);
    assert.match(a.steps[4]!.observation.text, /File "tools\.py", line \d+, in boom[\s\S]*RuntimeError: boom a/);
    assert.deepEqual(
      a.steps.slice(2).map((s) => s.observation.data.error),
      ['bad_args', 'unknown_tool', 'raised'],
    );
    assert.equal(a.steps[4]!.done, false);
    assert.equal(a.outcome.reward, 0);
    assert.equal((a.outcome.details as { invalidCalls: number }).invalidCalls, 3);
    const b = await run(['<call>bump()</call>', '<answer>3000</answer>']);
    assert.equal(b.steps[0]!.observation.text, '<obs>1</obs>', 'a new episode gets a fresh process');
    assert.equal(b.steps[1]!.termination, 'finished');
    assert.deepEqual([b.outcome.reward, b.outcome.success], [1, true]);
  });

  it('a tool that hangs or prints 100 MB is stopped with an error observation, and the episode goes on in a fresh process', async () => {
    const dir = workspace({ 'tasks.jsonl': jsonl(TASKS), 'tools.py': COUNTER_TOOLS });
    const options = await prepare(dir);
    const env = options.create();
    await env.reset(options.tasks().train[0]!);
    const t0 = Date.now();
    const texts: string[] = [];
    const data: Record<string, unknown>[] = [];
    for (const a of [
      '<call>bump(2)</call>',
      '<call>hang()</call>',
      '<call>bump()</call>',
      '<call>flood()</call>',
      '<call>flood_fd()</call>',
      '<call>bump()</call>',
    ]) {
      const r = await env.step(env.parseAction(a));
      texts.push(r.observation.text);
      data.push(r.observation.data);
      if (r.done) break;
    }
    await env.close();
    assert.ok(Date.now() - t0 < 15_000);
    assert.match(
      texts[1]!,
      /^<obs>error: no answer within 1500 ms; the tool process was stopped, and the next call starts a fresh one \(its state is lost\)<\/obs>$/,
    );
    assert.equal(data[1]!.timedOut, true);
    assert.match(texts[2]!, /restarted after a failure: earlier state is lost\]\n1<\/obs>$/, 'the counter starts again at 1');
    assert.match(texts[3]!, /error: flood printed more than 1048576 characters/);
    assert.equal(data[3]!.outputCapped, true);
    assert.match(texts[4]!, /error: the tools wrote more than 1048576 bytes outside print\(\)/);
    assert.match(texts[5]!, /1<\/obs>$/);
  });

  it('hostile call text is an error observation and the session lives on; reserved names are not tools', async () => {
    const dir = workspace({ 'tasks.jsonl': jsonl(TASKS), 'tools.py': COUNTER_TOOLS });
    const options = await prepare(dir);
    const env = options.create();
    await env.reset(options.tasks().train[0]!);
    const obs: string[] = [];
    for (const a of [
      '<call>bump(1)</call>',
      '<call>bump(1) or bump(2)</call>',
      '<call>bump(1)(2)</call>',
      `<call>bump(${'['.repeat(3000)})</call>`,
      '<call>bump(true)</call>',
      '<call>answer("42")</call>',
      '<call>bump(NaN)</call>',
      '<call>bump(1)</call>',
    ]) {
      obs.push((await env.step(env.parseAction(a))).observation.text);
      if (obs.length === 6) break; // maxCalls 6
    }
    await env.close();
    assert.equal(obs[0], '<obs>1</obs>');
    for (const o of obs.slice(1, 5)) assert.match(o, /^<obs>error: bump: /, o);
    assert.match(obs[5]!, /"answer" is not a tool: end the episode with <answer>/);
    const env2 = options.create();
    await env2.reset(options.tasks().train[0]!);
    const more: string[] = [];
    for (const a of ['<call>bump(NaN)</call>', '<call>bump(1)</call>', '<call>bump(2)</call>'])
      more.push((await env2.step(env2.parseAction(a))).observation.text);
    await env2.close();
    assert.match(more[0]!, /^<obs>error: bump: /);
    assert.deepEqual(more.slice(1), ['<obs>1</obs>', '<obs>3</obs>'], 'the same session after the error, its state intact');
    const hermes = await prepare(dir, { toolFormat: 'hermes' });
    const h = hermes.create();
    await h.reset(hermes.tasks().train[0]!);
    const deep = await h.step(h.parseAction(`<tool_call>{"name": "bump", "arguments": {"step": ${'['.repeat(2000)}${']'.repeat(2000)}}}</tool_call>`));
    assert.match(deep.observation.text, /^<tool_response>error: /);
    assert.equal(
      (await h.step(h.parseAction('<tool_call>{"name": "bump", "arguments": {}}</tool_call>'))).observation.text,
      '<tool_response>1</tool_response>',
    );
    assert.equal(h.parseAction('<tool_call>{"name": "execute_code", "arguments": {"code": "1"}}</tool_call>').kind, 'format_error');
    await h.close();
  });

  it('a closed episode leaves no process behind, not even one that left its session', async () => {
    const tools = `${COUNTER_TOOLS}
def daemon() -> int:
    '''Starts a process in its own session that would outlive the episode.'''
    import subprocess
    return subprocess.Popen(["sleep", "300"], start_new_session=True).pid
`;
    const dir = workspace({ 'tasks.jsonl': jsonl(TASKS), 'tools.py': tools });
    // the process level shares our PID namespace, so the pid the tool reports is one we can look up
    const options = await prepare(dir, { sandbox: 'process' });
    const env = options.create();
    await env.reset(options.tasks().train[0]!);
    const pid = Number(/<obs>(\d+)<\/obs>/.exec((await env.step(env.parseAction('<call>daemon()</call>'))).observation.text)![1]);
    const alive = (p: number): boolean => {
      try {
        process.kill(p, 0);
        return !/^\S+ \(.*\) Z/.test(fs.readFileSync(`/proc/${p}/stat`, 'utf8'));
      } catch {
        return false;
      }
    };
    assert.ok(alive(pid), 'the daemon runs while the episode does');
    await env.close();
    for (let i = 0; i < 50 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(!alive(pid), 'the daemon was killed with the episode');
  });

  it('hermes and code formats call the same tools', async () => {
    const dir = workspace({ 'tasks.jsonl': jsonl(TASKS), 'tools.py': COUNTER_TOOLS });
    const hermes = await prepare(dir, { toolFormat: 'hermes' });
    const env = hermes.create();
    const first = await env.reset(hermes.tasks().train[0]!);
    assert.match(
      first.text,
      /^<tools>\n\{"type":"function","function":\{"name":"bump","description":"Adds step to the episode's counter and returns it\.","parameters":\{"type":"object","properties":\{"step":\{"type":"integer","default":1\}\},"required":\[\]\}\}\}\n/,
    );
    const r1 = await env.step(env.parseAction('<tool_call>{"name": "bump", "arguments": {"step": 4}}</tool_call>'));
    assert.equal(r1.observation.text, '<tool_response>4</tool_response>');
    const r2 = await env.step(env.parseAction('<tool_call>{"name": "bump", "arguments": {"step": 4}</tool_call>'));
    assert.equal(r2.observation.data.formatError, true);
    await env.close();
    const code = await prepare(dir, { toolFormat: 'code' });
    const env2 = code.create();
    await env2.reset(code.tasks().train[0]!);
    const r3 = await env2.step(env2.parseAction('```python\nprint(bump(2) + bump(3))\nboom("z")\n```'));
    assert.match(r3.observation.text, /^7\nTraceback[\s\S]*File "main\.py", line 2[\s\S]*RuntimeError: boom z\n\[exit 1\]$/);
    const r4 = await env2.step(env2.parseAction('FINAL ANSWER: 3000\n'));
    assert.equal(r4.termination, 'finished');
    assert.equal((await env2.verify(new Rng(0))).success, true);
    await env2.close();
  });
});

describe('agent-rl with a workspace environment', () => {
  const config = (dir: string, extra: Record<string, unknown> = {}) => {
    const file = path.join(dir, 'run.agentrl.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        env: 'workspace',
        policy: 'transformer',
        method: 'sft',
        iterations: 2,
        groupsPerIteration: 4,
        evalEpisodes: 4,
        policyOptions: { dModel: 16, nLayers: 1, nHeads: 2, contextLength: 224, maxNewTokens: 24 },
        envOptions: { tasks: 'tasks.jsonl', tools: 'tools.py', reward: 'reward.py', ...extra },
      }),
    );
    return file;
  };
  const demoTasks = TASKS.map((t) => ({ ...t, demonstration: [`<call>bump(${t.id})</call>`, `<answer>${t.answer}</answer>`] }));

  it('a tool file that does not import, or a reward that returns text, fails before any run row is written', () => {
    const dir = workspace({ 'tasks.jsonl': jsonl(demoTasks), 'tools.py': 'def f(:\n', 'reward.py': 'def reward(task, trajectory):\n    return "1.0"\n' });
    const db = path.join(dir, 'runs.sqlite');
    const a = runCli(['train', '--config', config(dir), '--db', db], dir);
    assert.equal(a.code, 2, a.stderr);
    assert.match(a.stderr, /tools\.py: the tool file does not import: .*SyntaxError.*Fix: correct the file/s);
    fs.writeFileSync(path.join(dir, 'tools.py'), COUNTER_TOOLS);
    const b = runCli(['train', '--config', config(dir), '--db', db], dir);
    assert.equal(b.code, 2, b.stderr);
    assert.match(
      b.stderr,
      /reward\.py: reward\(\) returned str "1\.0", not a number\. Fix: return a number, or a dict \{"score": number, \.\.\.extras\} .*\(checked on a recorded episode of task 2, tasks\.jsonl line 2\)/,
    );
    const c = runCli(['env', 'check', '--config', config(dir)], dir);
    assert.equal(c.code, 2);
    assert.match(c.stderr, /reward\(\) returned str/);
    const runs = runCli(['runs', '--db', db, '--json'], dir);
    assert.deepEqual(JSON.parse(runs.stdout), [], 'no run row');
  });

  it('env check lists the tools and their schemas, tries the examples, and scores a recorded episode; sft then trains on it', () => {
    const example = path.join(ROOT, 'examples', 'unit-converter', 'run.agentrl.json');
    const r = runCli(['env', 'check', '--config', example], ROOT);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^tasks: 5019 training, 1260 held out \(tasks\.jsonl, preset default\)$/m);
    assert.match(r.stdout, /^ {2}convert\(value: number, from_unit: string, to_unit: string\) — Convert a quantity/m);
    assert.match(r.stdout, /example \{"value":2,"from_unit":"km","to_unit":"m"\} → "2000"/);
    assert.match(r.stdout, /reward: reward\.py, on a recorded episode of convert-00001 \(its demonstration\): reward 1, success true/);
    const dir = workspace({
      'tasks.jsonl': jsonl(demoTasks),
      'tools.py': COUNTER_TOOLS,
      'reward.py':
        'def reward(task, trajectory):\n    ok = trajectory["answer"] == str(task["ground_truth"])\n    return {"score": float(ok), "calls": trajectory["tool_calls"]}\n',
    });
    const db = path.join(dir, 'runs.sqlite');
    const t = runCli(['train', '--config', config(dir), '--db', db, '--output', path.join(dir, 'record.json')], dir);
    assert.equal(t.code, 0, t.stderr);
    const show = JSON.parse(runCli(['show', '1', '--db', db, '--json'], dir).stdout) as RunRecord;
    assert.equal(show.iterations.length, 2);
    // tool health per iteration: the tool's calls per episode and its latency, from the stored turns
    for (const m of show.iterations) {
      const bump = m.toolHealth?.bump;
      assert.ok(bump && bump.calls > 0 && bump.callsPerEpisode > 0 && bump.errorRate === 0, JSON.stringify(m.toolHealth));
      assert.ok(bump.latencyP50Ms! >= 0 && bump.latencyP95Ms! >= bump.latencyP50Ms! && bump.latencyMaxMs! >= bump.latencyP95Ms!);
    }
    assert.deepEqual(show.warnings, [], 'two iterations: no baseline to collapse from');
    const traj = JSON.parse(runCli(['trajectory', '1', '--db', db, '--json'], dir).stdout) as {
      turnList: { actionText: string; observationText: string }[];
      outcome: { reward: number; details: { metrics: Record<string, number> } };
    };
    assert.match(traj.turnList[0]!.actionText, /^<call>bump\(\d+\)<\/call>$/);
    assert.match(traj.turnList[0]!.observationText, /^<obs>\d+<\/obs>$/);
    assert.equal(traj.outcome.reward, 1);
    assert.deepEqual(traj.outcome.details.metrics, { calls: 1 });
  });
});
