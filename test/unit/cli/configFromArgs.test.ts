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

  it('--weight-dtype sets policyOptions.weightDtype; q8 with full fine-tuning is refused with the fix', () => {
    const lm = { env: 'calculator', policy: 'transformer', policyOptions: { model: '/m' } };
    assert.equal((configFromArgs({ 'weight-dtype': 'q8' }, lm).policyOptions as { weightDtype?: string }).weightDtype, 'q8');
    assert.throws(
      () => configFromArgs({ 'weight-dtype': 'q8' }, { ...lm, policyOptions: { model: '/m', loraRank: 0 } }),
      /policyOptions\.weightDtype.*full fine-tuning \(loraRank 0\).*policyOptions\.loraRank 8/s,
    );
  });

  it("a --config file's sections merge over a preset's key by key (the preset's other settings stay)", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arl-cfg-'));
    try {
      const file = path.join(dir, 'c.json');
      fs.writeFileSync(file, JSON.stringify({ algorithm: { learningRate: 0.001 }, policyOptions: { threads: 1 }, iterations: 5 }));
      const preset = {
        env: 'code',
        policy: 'transformer',
        iterations: 30,
        algorithm: { learningRate: 5e-5, klCoef: 0.04 },
        policyOptions: { maxNewTokens: 256, contextLength: 1024, model: '/m' },
      };
      const c = configFromArgs({ config: file }, preset);
      assert.equal(c.iterations, 5);
      assert.equal(c.algorithm.learningRate, 0.001);
      assert.equal(c.algorithm.klCoef, 0.04);
      assert.ok(c.policy === 'transformer');
      if (c.policy === 'transformer') assert.deepEqual([c.policyOptions.threads, c.policyOptions.maxNewTokens, c.policyOptions.contextLength], [1, 256, 1024]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a preset's KL penalty is dropped for a method without one (the RS-SFT control from seed 000's preset), and refused when asked for", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arl-cfg-'));
    try {
      const preset = { env: 'code', policy: 'transformer', method: 'grpo', algorithm: { learningRate: 5e-5, klCoef: 0.04, epochs: 1 } };
      const file = path.join(dir, 'c.json');
      fs.writeFileSync(file, JSON.stringify({ method: 'rs-sft' }));
      const c = configFromArgs({ config: file }, preset);
      assert.equal(c.method, 'rs-sft');
      assert.equal(c.algorithm.klCoef, 0);
      assert.equal(c.algorithm.learningRate, 5e-5, "the preset's other settings stay");
      assert.equal(configFromArgs({}, preset).algorithm.klCoef, 0.04, 'GRPO keeps it');
      assert.equal(configFromArgs({ method: 'rs-sft' }, preset).algorithm.klCoef, 0);
      assert.throws(() => configFromArgs({ config: file, kl: '0.1' }, preset), /algorithm\.klCoef = 0\.1: rs-sft trains by negative log-likelihood/);
      fs.writeFileSync(file, JSON.stringify({ method: 'rs-sft', algorithm: { klCoef: 0.04 } }));
      assert.throws(() => configFromArgs({ config: file }, preset), /algorithm\.klCoef = 0\.04/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
