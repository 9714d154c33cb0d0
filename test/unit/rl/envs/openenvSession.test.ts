// The OpenEnv client's protocol without openenv-core (test/integration/openenvEnv.test.ts runs the real
// server): a stand-in WebSocket server answers as HTTPEnvServer's /ws does — and as it must not — so
// that each answer the client reads, and each failure it names, is checked on any machine. Plus the
// fields a run picks from a /schema and the text of an observation's field.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { chooseFields, observationText } from '../../../../src/rl/envs/openenv/openenvFields';
import { OpenEnvSession, readAnswer, sessionUrl } from '../../../../src/rl/envs/openenv/openenvSession';
import { standInWebSocket, type StandInServer } from '../../../helpers/standInWebSocket';

const servers: StandInServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

/** A stand-in whose answer to each message is `reply(message)`: a reply object, 'silent' (or undefined), 'drop', or raw text. */
async function server(reply: (m: { type: string; data?: Record<string, unknown> }) => unknown): Promise<string> {
  const s = await standInWebSocket((text, c) => {
    const r = reply(JSON.parse(text) as { type: string; data?: Record<string, unknown> });
    if (r === 'silent' || r === undefined) return; // (undefined: the client's close message)
    if (r === 'drop') return c.drop();
    c.send(typeof r === 'string' ? r : JSON.stringify(r));
  });
  servers.push(s);
  return s.url;
}

describe('the OpenEnv session client', () => {
  it('plays reset, step and state over one socket, in the shapes openenv-core sends', async () => {
    const seen: unknown[] = [];
    let steps = 0;
    const url = await server((m) => {
      seen.push(m);
      if (m.type === 'reset') return { type: 'observation', data: { observation: { prompt: `seed ${String(m.data?.seed)}` }, reward: null, done: false } };
      if (m.type === 'step')
        return { type: 'observation', data: { observation: { prompt: `got ${String(m.data?.guess)}` }, reward: ++steps === 2, done: steps === 2 } };
      return { type: 'state', data: { episode_id: 'e', step_count: steps } };
    });
    const s = await OpenEnvSession.open(url, 5000);
    assert.deepEqual(await s.reset({ seed: 4, episode_id: 'e' }), { observation: { prompt: 'seed 4' }, reward: null, done: false });
    assert.deepEqual(await s.step({ guess: 'a' }), { observation: { prompt: 'got a' }, reward: 0, done: false });
    // a bool reward counts as Python counts it
    assert.deepEqual(await s.step({ guess: 'b' }), { observation: { prompt: 'got b' }, reward: 1, done: true });
    assert.deepEqual(await s.state(), { episode_id: 'e', step_count: 2 });
    assert.deepEqual(seen, [
      { type: 'reset', data: { seed: 4, episode_id: 'e' } },
      { type: 'step', data: { guess: 'a' } },
      { type: 'step', data: { guess: 'b' } },
      { type: 'state' },
    ]);
    s.close();
    s.close();
    await assert.rejects(s.step({ guess: 'c' }), /step after the session was closed/);
  });

  it("names the server's error, with its code's fix", async () => {
    const url = await server(() => ({ type: 'error', data: { message: 'Server at capacity (4/4)', code: 'CAPACITY_REACHED' } }));
    const s = await OpenEnvSession.open(url, 5000);
    await assert.rejects(
      s.reset({}),
      new RegExp(
        `OpenEnv session at ws://127\\.0\\.0\\.1:\\d+/ws: reset failed on the server: Server at capacity \\(4/4\\) \\(CAPACITY_REACHED\\)\\. Fix: lower envOptions\\.concurrency`,
      ),
    );
    s.close();
  });

  it('a session the server refuses as it opens (at capacity): the error it sent, with its code, answers the first request', async () => {
    const s = await standInWebSocket(
      () => undefined,
      (c) => {
        c.send(JSON.stringify({ type: 'error', data: { message: 'Server at capacity (1/1)', code: 'CAPACITY_REACHED' } }));
        setTimeout(() => c.drop(), 50);
      },
    );
    servers.push(s);
    const session = await OpenEnvSession.open(s.url, 5000);
    await new Promise((r) => setTimeout(r, 20));
    const refused = await session.reset({}).then(
      () => undefined,
      (e: unknown) => e as { message: string; code?: string },
    );
    assert.match(
      refused?.message ?? '',
      /the server refused the session: Server at capacity \(1\/1\) \(CAPACITY_REACHED\)\. Fix: lower envOptions\.concurrency/,
    );
    assert.equal(refused?.code, 'CAPACITY_REACHED', 'the code the environment tries a reset again on');
    session.close();
  });

  it('refuses answers out of protocol, each naming the request and the field', async () => {
    const answers: unknown[] = [
      'not json',
      { type: 'state', data: {} },
      { type: 'observation', data: { observation: [1], reward: 0, done: false } },
      { type: 'observation', data: { observation: {}, reward: 'high', done: false } },
      { type: 'observation', data: { observation: {}, reward: 1 } },
    ];
    const url = await server(() => answers.shift());
    const s = await OpenEnvSession.open(url, 5000);
    await assert.rejects(s.step({}), /step answered something that is not JSON \(not json\)\. Fix: is this an OpenEnv server\?/);
    await assert.rejects(s.step({}), /step answered a message of type "state", not "observation"/);
    await assert.rejects(s.step({}), /step answered a malformed observation: data\.observation is a list, not an object/);
    await assert.rejects(s.step({}), /step answered a malformed observation: data\.reward is "high", not a number or null/);
    await assert.rejects(s.step({}), /step answered a malformed observation: data\.done is absent, not true or false/);
    s.close();
  });

  it('a request unanswered within the timeout, and a server that drops the connection, end the session saying so', async () => {
    const silent = await OpenEnvSession.open(await server(() => 'silent'), 300);
    const t = Date.now();
    await assert.rejects(silent.step({}), /step unanswered within 300 ms \(envOptions\.timeoutMs\)/);
    assert.ok(Date.now() - t < 3000);
    await assert.rejects(silent.state(), /state after step went unanswered for 300 ms/);
    const dropped = await OpenEnvSession.open(await server(() => 'drop'), 5000, () => ' (the server command ["x"] ended: exit code 3)');
    await assert.rejects(dropped.step({}), /the server closed the session \(code 1006\) during step \(the server command \["x"\] ended: exit code 3\)/);
  });

  it('names the address it could not connect to', async () => {
    const s = await standInWebSocket(() => undefined);
    const url = s.url;
    await s.close();
    await assert.rejects(OpenEnvSession.open(url, 5000), new RegExp(`OpenEnv session at ${sessionUrl(url)}: could not connect\\. Fix: start the server there`));
    assert.equal(sessionUrl('https://h.example/env/'), 'wss://h.example/env/ws');
    assert.throws(() => readAnswer(null, 'X: step'), /X: step answered a malformed observation: its data is null/);
  });
});

describe("an OpenEnv run's fields", () => {
  const text = { type: 'string' };
  const optionalText = { anyOf: [{ type: 'string' }, { type: 'null' }] };
  const schema = (action: Record<string, unknown>, observation: Record<string, unknown>, required: string[] = []) => ({
    action: { properties: { metadata: { type: 'object' }, ...action }, required },
    observation: { properties: { done: {}, reward: {}, metadata: {}, ...observation } },
  });

  it("takes the schema's one text field, else a preferred name, else the first; the configured ones over both", () => {
    const none = { observationField: '', actionField: '' };
    assert.deepEqual(chooseFields(schema({ message: text }, { echoed_message: text, message_length: { type: 'integer' } }), none, 'U'), {
      observation: 'echoed_message',
      action: 'message',
    });
    assert.deepEqual(chooseFields(schema({ note: text, guess: text }, { board: optionalText, prompt: text }), none, 'U'), {
      observation: 'prompt',
      action: 'note',
    });
    assert.deepEqual(chooseFields(schema({ note: text, guess: text }, { a: text, b: text }, ['guess']), none, 'U'), { observation: 'a', action: 'guess' });
    assert.deepEqual(chooseFields(schema({ x: text }, { grid: { type: 'array' } }), none, 'U').observation, '', 'no text field: the whole observation');
    assert.deepEqual(chooseFields(schema({ x: text }, {}), { observationField: 'board.text', actionField: 'x' }, 'U'), {
      observation: 'board.text',
      action: 'x',
    });
  });

  it('refuses an action without a text field, or one that requires fields the workbench does not send', () => {
    assert.throws(
      () => chooseFields(schema({ action_id: { type: 'integer' } }, {}), { observationField: '', actionField: '' }, 'http://s'),
      /the OpenEnv server at http:\/\/s: its action schema has no text field \(its fields: action_id\)\. Fix: name the field the model's text goes to in envOptions\.actionField/,
    );
    assert.throws(
      () => chooseFields(schema({ guess: text, player: { type: 'integer' } }, {}, ['guess', 'player']), { observationField: '', actionField: '' }, 'http://s'),
      /its action requires player besides guess/,
    );
  });

  it("reads an observation's field by its path: text as it is, other values as JSON, a missing one an error naming the fields there are", () => {
    const obs = { prompt: 'hi', board: { text: 'x.o', cells: [1, 2] }, note: null };
    assert.equal(observationText(obs, 'prompt', 'W'), 'hi');
    assert.equal(observationText(obs, 'board.text', 'W'), 'x.o');
    assert.equal(observationText(obs, 'board.cells', 'W'), '[1,2]');
    assert.equal(observationText(obs, 'note', 'W'), '');
    assert.equal(observationText({ a: 1 }, '', 'W'), '{"a":1}');
    assert.throws(() => observationText(obs, 'board.title', 'W'), /W answered a malformed observation: it has no board\.title \(its fields: text, cells\)/);
  });
});
