// The command registry (src/cli/cli.ts COMMANDS, each declared with command.ts's defineCommand): every
// command refuses a flag it does not take, --busy-timeout is validated once for every command that
// opens the database, --help is generated per command from its declaration, and an error's exit code
// is the one it carries. Commands run in this process with stdout and stderr captured; every case
// here fails before a database or a model is opened.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { COMMANDS, reportError, runCli, USAGE } from '../../../src/cli/cli';
import { formsOf, type Command } from '../../../src/cli/command';
import { carriedExitCode } from '../../../src/cli/exitCodes';
import { DATABASE, JSON_OUTPUT } from '../../../src/cli/optionSets';
import { UsageError } from '../../../src/cli/usageError';
import { ConfigError } from '../../../src/shared/runConfig';
import { StoreError } from '../../../src/store/openStore';

interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs fn with process.stdout and process.stderr captured as the strings written. */
async function captured(fn: () => Promise<number> | number): Promise<Ran> {
  let stdout = '';
  let stderr = '';
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  process.stdout.write = (chunk: string | Uint8Array) => ((stdout += String(chunk)), true);
  process.stderr.write = (chunk: string | Uint8Array) => ((stderr += String(chunk)), true);
  try {
    return { code: await fn(), stdout, stderr };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
}

const cli = (argv: readonly string[]): Promise<Ran> => captured(() => runCli(argv));

/** Every command a command line can reach: a group's subcommands, each on its own. */
const leaves = (c: Command): Command[] => (c.subcommands ? c.subcommands.flatMap(leaves) : [c]);
const ALL = COMMANDS.flatMap(leaves);

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'arl-cli-'));
after(() => fs.rmSync(work, { recursive: true, force: true }));

describe('the command registry', () => {
  it('declares each command once, with a summary, a usage naming it and --help', () => {
    const names = ALL.map((c) => c.name);
    assert.equal(new Set(names).size, names.length, `a command declared twice: ${names.join(', ')}`);
    assert.ok(names.length >= 16, `${names.length} commands`);
    for (const c of ALL) {
      assert.ok(c.summary.length > 0 && !c.summary.includes('\n'), `${c.name}: a one-line summary`);
      assert.ok(formsOf(c).length > 0 && formsOf(c).every((f) => f.startsWith(`agent-rl ${c.name}`)), `${c.name}: its usage starts with its forms`);
      assert.deepEqual(c.options.help, { type: 'boolean', short: 'h' }, `${c.name}: takes --help`);
      // the top-level usage lists every form of every command
      for (const f of formsOf(c)) assert.ok(USAGE.includes(`  ${f}\n`), `${c.name}: the usage lists ${f}`);
    }
  });

  for (const c of ALL) {
    it(`${c.name} refuses a flag it does not declare: exit 2, the flag named, then its usage`, async () => {
      const r = await cli([...c.name.split(' '), '--no-such-flag', 'x']);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /Unknown option '--no-such-flag'/);
      assert.ok(r.stderr.includes(formsOf(c)[0]!), `${c.name}: the usage follows the error`);
      assert.equal(r.stdout, '');
    });
  }

  it('agent-rl show 3 --lr 1 is refused naming --lr and the usage of show (train takes it; show does not)', async () => {
    const r = await cli(['show', '3', '--lr', '1', '--db', path.join(work, 'show.sqlite')]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^agent-rl: show: Unknown option '--lr'/);
    assert.match(r.stderr, /\n\nagent-rl show RUN \[--db FILE\] \[--json\]\n/);
    assert.ok(!fs.existsSync(path.join(work, 'show.sqlite')), 'nothing was opened');
    const takes = ALL.filter((c) => 'lr' in c.options).map((c) => c.name);
    assert.deepEqual(takes, ['train', 'sft']);
  });

  it('a subcommand takes its own flags only: env check refuses env run --actions, model list refuses model new --arch', async () => {
    const check = await cli(['env', 'check', '--actions', 'a.json']);
    assert.equal(check.code, 2);
    assert.match(check.stderr, /env check: Unknown option '--actions'/);
    const list = await cli(['model', 'list', '--arch', 'qwen3']);
    assert.equal(list.code, 2);
    assert.match(list.stderr, /model list: Unknown option '--arch'/);
  });

  it("a group's subcommand is found among the flags, and a missing or unknown one is named", async () => {
    // the flag before the subcommand is env run's own: it gets there, and refuses the missing --env
    const run = await cli(['env', '--actions', 'a.json', 'run']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /env run needs --env, one of:/);
    const none = await cli(['env']);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /env needs a subcommand: check, run/);
    const unknown = await cli(['model', 'frobnicate']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /model needs a subcommand: check, new, list, export \(got frobnicate\)/);
  });

  it('the top level: no command prints the usage (exit 2), help prints it (exit 0), an unknown command is named', async () => {
    const bare = await cli([]);
    assert.deepEqual([bare.code, bare.stdout], [2, `${USAGE}\n`]);
    const help = await cli(['--help']);
    assert.deepEqual([help.code, help.stdout], [0, `${USAGE}\n`]);
    const unknown = await cli(['frobnicate']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command "frobnicate"/);
  });
});

describe('--busy-timeout, validated once for every command that opens the database', () => {
  // the positionals each such command needs to get as far as opening its database
  const ARGS: Readonly<Record<string, readonly string[]>> = {
    train: [],
    sft: [],
    runs: [],
    show: ['1'],
    trajectory: ['1'],
    health: ['1'],
    rescore: ['1'],
    request: ['1'],
    import: ['verl', path.join(work, 'dumps')],
  };

  it('is taken by exactly the commands that open the database', () => {
    assert.deepEqual(
      ALL.filter((c) => 'busy-timeout' in c.options).map((c) => c.name),
      Object.keys(ARGS),
    );
  });

  for (const [name, positionals] of Object.entries(ARGS)) {
    for (const bad of ['soon', '-1', '1.5', '']) {
      it(`${name} --busy-timeout ${JSON.stringify(bad)}: exit 2 naming --busy-timeout, no database created`, async () => {
        const db = path.join(work, `${name}.sqlite`);
        const r = await cli([name, ...positionals, '--db', db, `--busy-timeout=${bad}`]);
        assert.equal(r.code, 2, r.stderr);
        assert.equal(r.stderr, `agent-rl: --busy-timeout ${bad}: use a whole number of milliseconds ≥ 0\n`);
        assert.ok(!fs.existsSync(db));
      });
    }
  }
});

describe('--help, generated from each declaration', () => {
  for (const c of ALL) {
    it(`${c.name} --help prints its usage, which names every flag it takes and its shared sets' lines`, async () => {
      const r = await cli([...c.name.split(' '), '--help']);
      assert.equal(r.code, 0, r.stderr);
      // sandbox serve's --help also says this machine's default concurrency, which its declared usage leaves out
      assert.ok(r.stdout.replace(/ over 40 MB each, here \d+\)/, ' over 40 MB each)').startsWith(c.usage), `${c.name}: --help starts with its usage`);
      const unnamed = Object.keys(c.options).filter((flag) => flag !== 'help' && !new RegExp(`--${flag}(?![\\w-])`).test(c.usage));
      assert.deepEqual(unnamed, [], `${c.name}: flags its usage does not name`);
      for (const set of [DATABASE, JSON_OUTPUT]) {
        const takes = Object.keys(set.options).every((flag) => flag in c.options);
        for (const line of set.help) assert.equal(c.usage.includes(line), takes, `${c.name}: ${line}`);
      }
    });
  }

  it('train --help adds the algorithm table of the run its flags describe', async () => {
    const r = await cli(['train', '--help', '--env', 'calculator', '--policy', 'transformer']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /\n\nAlgorithm settings for env calculator, policy transformer, method grpo /);
    const sft = await cli(['sft', '--help']);
    assert.match(sft.stdout, /Algorithm settings for env calculator, policy transformer, method sft /);
  });

  it("a group's --help prints every subcommand's usage", async () => {
    const r = await cli(['model', '--help']);
    assert.equal(r.code, 0);
    for (const form of ['agent-rl model check DIR', 'agent-rl model new --out DIR', 'agent-rl model list', 'agent-rl model export CHECKPOINT'])
      assert.ok(r.stdout.includes(form), form);
  });
});

describe('errors carry their exit codes', () => {
  class SomeInputError extends Error {
    readonly exitCode = 2;
  }

  it('an error class that declares exitCode 2 ends agent-rl with 2, its message printed without a stack', async () => {
    const r = await captured(() => reportError(new SomeInputError('bad: fix it')));
    assert.deepEqual([r.code, r.stderr], [2, 'agent-rl: bad: fix it\n']);
  });

  it('a plain Error ends it with 1, printed with its stack (a failure while running)', async () => {
    const r = await captured(() => reportError(new Error('it broke')));
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^agent-rl: Error: it broke\n\s+at /);
  });

  it("the project's input errors carry 2; a code other than 1 or 2 (a child process's exit code) is not taken", () => {
    assert.equal(carriedExitCode(new UsageError('x')), 2);
    assert.equal(carriedExitCode(new StoreError('x', 'locked')), 2);
    assert.equal(carriedExitCode(new ConfigError([])), 2);
    assert.equal(carriedExitCode(Object.assign(new Error('x'), { exitCode: 127 })), undefined);
    assert.equal(carriedExitCode({ exitCode: 2 }), undefined);
  });
});
