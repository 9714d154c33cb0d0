// AdamW (decoupled weight decay) over tfjs variables, with global gradient-norm clipping.
// State (step, first and second moments) is kept per variable and saved in checkpoints.
import * as tf from '@tensorflow/tfjs';

export interface AdamWOptions {
  readonly lr: number;
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  readonly weightDecay: number;
  /** 0 = no clipping. */
  readonly maxGradNorm: number;
}

export class AdamW {
  step = 0;
  readonly m: tf.Variable[];
  readonly v: tf.Variable[];

  constructor(readonly vars: readonly tf.Variable[], public options: AdamWOptions) {
    this.m = vars.map((x) => tf.variable(tf.zerosLike(x), false));
    this.v = vars.map((x) => tf.variable(tf.zerosLike(x), false));
  }

  /** Applies one update from gradients aligned with `vars`; returns the gradient norm before clipping. */
  apply(grads: readonly tf.Tensor[], lrScale = 1): number {
    this.step += 1;
    const o = this.options;
    const norm = tf.tidy(() => tf.sqrt(tf.addN(grads.map((g) => tf.sum(tf.square(g))))).dataSync()[0]!);
    const scale = o.maxGradNorm > 0 && norm > o.maxGradNorm ? o.maxGradNorm / (norm + 1e-6) : 1;
    const lr = o.lr * lrScale;
    const bc1 = 1 - o.beta1 ** this.step;
    const bc2 = 1 - o.beta2 ** this.step;
    tf.tidy(() => {
      this.vars.forEach((x, i) => {
        const g = scale === 1 ? grads[i]! : tf.mul(grads[i]!, scale);
        const m = tf.add(tf.mul(this.m[i]!, o.beta1), tf.mul(g, 1 - o.beta1));
        const v = tf.add(tf.mul(this.v[i]!, o.beta2), tf.mul(tf.square(g), 1 - o.beta2));
        this.m[i]!.assign(m);
        this.v[i]!.assign(v);
        const update = tf.div(tf.div(m, bc1), tf.add(tf.sqrt(tf.div(v, bc2)), o.eps));
        // decay only matrices (weights), not gains and biases
        const decayed = o.weightDecay > 0 && x.shape.length > 1 ? tf.mul(x, 1 - lr * o.weightDecay) : x;
        x.assign(tf.sub(decayed, tf.mul(update, lr)));
      });
    });
    return norm;
  }

  dispose(): void {
    tf.dispose([...this.m, ...this.v]);
  }
}
