// The table policy of seed 002: a trainable logit for each (visible state, action) pair, initialised to
// 0 (uniform). Its reference is the frozen initial table, so the exact KL over the whole action
// distribution is available. It trains through the learner like any policy: a trajectory is one
// position per turn (input = the state, target = the action), and its logits for a batch are one
// product of the states' one-hot rows with the table.
import * as tf from '@tensorflow/tfjs';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { PolicyStep, Trajectory } from '../../../shared/types';
import { AdamW, type AdamWOptions } from '../../algo/adamw';
import type { TabularSpec } from '../../envs/environment';
import type { Rng } from '../../random';
import type { PaddedBatch, TrainSequence } from '../../algo/trainSequence';
import type { Differentiable } from '../../algo/gradients';
import type { PolicyContext, PolicySample, TrainablePolicy } from '../policy';

/** Logits of a table [S, A] for a padded batch of state indices: [B, T, A]. */
function tableLogits(table: tf.Tensor, S: number, batch: PaddedBatch): tf.Tensor3D {
  const { B, T } = batch;
  return tf.tidy(() => tf.reshape<tf.Rank.R3>(tf.matMul(tf.oneHot(tf.tensor1d(batch.inputs, 'int32'), S).asType('float32'), table), [B, T, -1]));
}

export class TablePolicy implements TrainablePolicy, Differentiable {
  /** [S, A] trainable logits; row s is state s. */
  readonly table: tf.Variable;
  /** [S, A] the frozen initial table. */
  readonly referenceTable: tf.Tensor;
  readonly compute: string;
  readonly maxPositions = Number.POSITIVE_INFINITY;
  readonly temperature = 1;
  readonly vocabularySize: number;
  readonly optimizer: AdamW;
  private versionCounter = 0;
  /** The table's values, read once after every step (sampling reads them, not the tensor). */
  private values: Float32Array;
  private readonly reference: Differentiable;

  constructor(
    readonly spec: TabularSpec,
    optimizer: AdamWOptions,
    backend: string,
  ) {
    const S = spec.stateCount;
    this.vocabularySize = spec.actions.length;
    this.table = tf.variable(tf.zeros([S, this.vocabularySize]));
    this.referenceTable = tf.zeros([S, this.vocabularySize]);
    this.values = new Float32Array(S * this.vocabularySize);
    this.optimizer = new AdamW([this.table], optimizer);
    this.compute = `tfjs ${backend} (table policy, ${S} × ${this.vocabularySize} logits)`;
    const ref = this.referenceTable;
    this.reference = { weights: [], vocabularySize: this.vocabularySize, logits: (b) => tableLogits(ref, S, b) };
  }

  get version(): number {
    return this.versionCounter;
  }

  get weights(): readonly tf.Variable[] {
    return [this.table];
  }

  logits(batch: PaddedBatch): tf.Tensor3D {
    return tableLogits(this.table, this.spec.stateCount, batch);
  }

  /** log π(· | state): [A], from the table's current values. */
  logProbs(state: number): Float64Array {
    const A = this.vocabularySize;
    const row = this.values.subarray(state * A, (state + 1) * A);
    const max = Math.max(...row);
    const lse = max + Math.log(row.reduce((acc, l) => acc + Math.exp(l - max), 0));
    return Float64Array.from(row, (l) => l - lse);
  }

  sample(contexts: readonly PolicyContext[], rng: Rng): Promise<PolicySample[]> {
    return Promise.resolve(
      contexts.map((ctx) => {
        const state = this.spec.stateOf(ctx.observation);
        const logp = this.logProbs(state);
        const action = (ctx.rng ?? rng).categorical(Array.from(logp, (l) => Math.exp(l)));
        const step: PolicyStep = { behaviourLogprob: logp[action]!, policyVersion: this.versionCounter, stateIndex: state, actionIndex: action };
        return { text: this.spec.actions[action]!, step };
      }),
    );
  }

  sequence(t: Trajectory): TrainSequence | undefined {
    if (t.turns.length === 0) return undefined;
    const inputs: number[] = [];
    const targets: number[] = [];
    for (const turn of t.turns) {
      const { stateIndex: s, actionIndex: a } = turn.policy;
      if (s === undefined || a === undefined) throw new Error('TablePolicy: a turn without stateIndex/actionIndex (not sampled by a table policy)');
      inputs.push(s);
      targets.push(a);
    }
    return { inputs, targets, mask: inputs.map(() => 1), behaviour: t.turns.map((turn) => turn.policy.behaviourLogprob), advantage: 0 };
  }

  trainable(model: 'current' | 'reference'): Differentiable {
    return model === 'reference' ? this.reference : this;
  }

  /** One pass for the whole batch: a [B, T, A] of a few actions is small. */
  readonly passBudget = { train: Number.POSITIVE_INFINITY, logprobs: Number.POSITIVE_INFINITY };

  async applyGradients(grads: readonly tf.Tensor[], lr: number): Promise<number> {
    const norm = await this.optimizer.apply(grads, lr);
    this.values = (await this.table.data()) as Float32Array;
    return norm;
  }

  completeUpdate(): void {
    this.versionCounter += 1;
  }

  /** The table, Adam's moments and step, and the version, as JSON (numbers in float32 round-trip exactly as doubles). */
  async saveState(dir: string): Promise<void> {
    const arr = async (t: tf.Tensor): Promise<number[]> => Array.from(await t.data());
    const state = {
      format: 'agent-rl-table-state',
      version: this.versionCounter,
      step: this.optimizer.step,
      shape: this.table.shape,
      table: await arr(this.table),
      m: await arr(this.optimizer.m[0]!),
      v: await arr(this.optimizer.v[0]!),
    };
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'table-state.json'), JSON.stringify(state));
  }

  async loadState(dir: string): Promise<void> {
    const s = JSON.parse(fs.readFileSync(path.join(dir, 'table-state.json'), 'utf8')) as {
      format: string;
      version: number;
      step: number;
      shape: number[];
      table: number[];
      m: number[];
      v: number[];
    };
    if (s.format !== 'agent-rl-table-state' || s.shape.join('x') !== this.table.shape.join('x'))
      throw new Error(`${dir}: not a table state of shape ${this.table.shape.join('x')}`);
    tf.tidy(() => {
      this.table.assign(tf.tensor2d(s.table, this.table.shape as [number, number]));
      this.optimizer.m[0]!.assign(tf.tensor2d(s.m, this.table.shape as [number, number]));
      this.optimizer.v[0]!.assign(tf.tensor2d(s.v, this.table.shape as [number, number]));
    });
    this.optimizer.step = s.step;
    this.versionCounter = s.version;
    this.values = (await this.table.data()) as Float32Array;
  }

  dispose(): void {
    this.table.dispose();
    this.referenceTable.dispose();
    this.optimizer.dispose();
  }
}
