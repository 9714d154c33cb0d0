import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { configFromArgs } from '../../../src/cli/runConfigArgs';

describe('configFromArgs', () => {
  it("a command's defaults sit beneath the --config file, and flags over both (agent-rl sft --config with env code)", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arl-cfg-'));
    try {
      const file = path.join(dir, 'c.json');
      fs.writeFileSync(file, JSON.stringify({ env: 'code', seed: 4 }));
      const sftDefaults = { env: 'calculator', policy: 'transformer' };
      const fromFile = configFromArgs({ config: file, method: 'sft' }, sftDefaults);
      assert.deepEqual([fromFile.env, fromFile.policy, fromFile.method, fromFile.seed], ['code', 'transformer', 'sft', 4]);
      assert.equal(configFromArgs({ config: file, method: 'sft', env: 'calculator' }, sftDefaults).env, 'calculator');
      assert.equal(configFromArgs({ method: 'sft' }, sftDefaults).env, 'calculator');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
