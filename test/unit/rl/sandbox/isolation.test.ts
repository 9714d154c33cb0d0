// The sandbox's answers for the platforms this machine is not: the seatbelt level's generated profile
// (macOS's sandbox-exec) and what Windows and macOS are told. Neither platform can be run here, so
// these check what is produced; the seatbelt level itself runs only on macOS (skipped elsewhere, saying so).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { chooseLevel, detectIsolation, IsolationUnavailableError, resolvePython, seatbeltProfile, wrapPython } from '../../../../src/rl/sandbox/isolation';

/** The text of a Seatbelt profile outside its string literals (SBPL strings: "…" with backslash escapes). */
function outsideStrings(profile: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < profile.length; i++) {
    const c = profile[i]!;
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else out += c;
  }
  assert.equal(inString, false, 'every string literal of the profile is closed');
  return out;
}

/** The string literals of a profile, unescaped. */
function stringsOf(profile: string): string[] {
  return [...profile.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!.replace(/\\(.)/g, '$1'));
}

describe('the seatbelt level (macOS sandbox-exec), as generated here', () => {
  const python = resolvePython();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-sb-'));

  it('denies by default, allows no network, and writes only in the work folder (its real path)', () => {
    // the work folder reached through a symbolic link, as macOS's /var/folders is through /var → /private/var
    const link = path.join(os.tmpdir(), `agent-rl-sb-link-${process.pid}`);
    fs.rmSync(link, { force: true });
    fs.symlinkSync(work, link);
    try {
      const profile = seatbeltProfile(python, link);
      const lines = profile.trim().split('\n');
      assert.deepEqual(lines.slice(0, 2), ['(version 1)', '(deny default)']);
      const rules = outsideStrings(profile);
      assert.doesNotMatch(rules, /allow network/);
      assert.match(rules, /\(deny network\*\)/);
      const writes = lines.filter((l) => /file-write\*/.test(outsideStrings(l)));
      assert.equal(writes.length, 1, 'one rule allows writing');
      assert.deepEqual(stringsOf(writes[0]!), [fs.realpathSync(work)], 'and only in the work folder, by its real path');
      assert.ok(!stringsOf(profile).includes(link), 'the link itself is not named');
      // the interpreter's installation is readable and executable, not writable
      const prefix = path.dirname(path.dirname(fs.realpathSync(python)));
      const execRule = lines.find((l) => l.startsWith('(allow process-exec'))!;
      assert.ok(stringsOf(execRule).includes(prefix), execRule);
      // a program compiled in the work folder runs from it (sandbox serve's C++, Go, Rust)
      assert.ok(stringsOf(execRule).includes(fs.realpathSync(work)), execRule);
      assert.match(rules, /\(allow signal \(target same-sandbox\)\)/);
      assert.match(rules, /\(allow process-info\* \(target same-sandbox\)\)/);
    } finally {
      fs.rmSync(link, { force: true });
    }
  });

  it('a work folder whose name holds quotes, backslashes and profile syntax stays one string', () => {
    const hostile = path.join(work, 'x") (allow network*) (allow file-write* (subpath "/") ("\\');
    fs.mkdirSync(hostile, { recursive: true });
    const profile = seatbeltProfile(python, hostile);
    const rules = outsideStrings(profile);
    assert.doesNotMatch(rules, /allow network/);
    // the rules that allow writing, read outside their strings (the folder's name holds "file-write*")
    const writes = profile.split('\n').filter((l) => /file-write\*/.test(outsideStrings(l)));
    assert.equal(writes.length, 1);
    assert.deepEqual(stringsOf(writes[0]!), [fs.realpathSync(hostile)]);
  });

  it('wraps the interpreter in /usr/bin/sandbox-exec with that profile, and needs the work folder', () => {
    const argv = wrapPython('seatbelt', ['-c', 'print(1)'], { python, workDir: work });
    assert.deepEqual(argv.slice(0, 2), ['/usr/bin/sandbox-exec', '-p']);
    assert.equal(argv[2], seatbeltProfile(python, work));
    assert.deepEqual(argv.slice(3), [python, '-I', '-S', '-c', 'print(1)']);
    assert.throws(() => wrapPython('seatbelt', ['-c', 'print(1)'], { python }), /needs the work folder/);
  });

  it(
    'on macOS the level is probed for real',
    { skip: process.platform === 'darwin' ? false : `this is ${process.platform}: the seatbelt level runs only on macOS` },
    () => {
      const s = detectIsolation(python).find((x) => x.level === 'seatbelt')!;
      assert.equal(s.available, true, s.reason);
    },
  );
});

describe('what each platform is told', () => {
  const python = resolvePython();

  it('Windows: no level, and auto refuses with the ways out instead of running code unconfined', () => {
    const statuses = detectIsolation(python, 'win32');
    assert.deepEqual(
      statuses.map((s) => [s.level, s.available]),
      [
        ['strict', false],
        ['landlock', false],
        ['seatbelt', false],
        ['network', false],
        ['process', false],
      ],
    );
    const windows = statuses.at(-1)!.reason;
    assert.match(windows, /resource module and a job object/);
    assert.match(windows, /WSL/);
    assert.match(windows, /agent-rl sandbox serve/);
    assert.throws(
      () => chooseLevel('auto', python, 'win32'),
      (e: unknown) =>
        e instanceof IsolationUnavailableError && e.message.startsWith('No sandbox level works on this machine: Windows has no sandbox level yet'),
    );
    assert.throws(() => chooseLevel('process', python, 'win32'), /Sandbox level "process" was demanded but is not available: Windows/);
  });

  it('macOS: the Linux levels say they are Linux only; seatbelt where sandbox-exec is, else process', () => {
    const statuses = detectIsolation(python, 'darwin');
    for (const level of ['strict', 'landlock', 'network'] as const) {
      const s = statuses.find((x) => x.level === level)!;
      assert.equal(s.available, false);
      assert.match(s.reason, /^Linux only \(this is darwin\)$/);
    }
    const seatbelt = statuses.find((x) => x.level === 'seatbelt')!;
    // here, off macOS, there is no sandbox-exec to try: the level says so and auto falls to process
    if (!fs.existsSync('/usr/bin/sandbox-exec'))
      assert.deepEqual([seatbelt.available, seatbelt.reason], [false, '/usr/bin/sandbox-exec is missing (it ships with macOS)']);
    assert.equal(chooseLevel('auto', python, 'darwin'), seatbelt.available ? 'seatbelt' : 'process');
  });

  it('Linux: seatbelt says it is macOS only', () => {
    const s = detectIsolation(python, 'linux').find((x) => x.level === 'seatbelt')!;
    assert.deepEqual([s.available, s.reason], [false, 'macOS only (this is linux)']);
  });
});
