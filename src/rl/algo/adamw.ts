// AdamW (decoupled weight decay) over tfjs variables, with global gradient-norm clipping; with weight
// decay 0 and no clipping it is Adam (Kingma & Ba) with PyTorch's defaults and bias correction.
// State (step, first and second moments) is kept per variable and saved in checkpoints. The learner
// hands it the learning rate of each step (its schedule).
import * as tf from '@tensorflow/tfjs';

export interface AdamWOptions {
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  readonly weightDecay: number;
  /** 0 = no clipping. */
  readonly maxGradNorm: number;
}

export const ADAM_DEFAULTS: AdamWOptions = { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, maxGradNorm: 0 };

export class AdamW {
  step = 0;
  readonly m: tf.Variable[];
  readonly v: tf.Variable[];

  constructor(
    readonly vars: readonly tf.Variable[],
    public options: AdamWOptions,
  ) {
    this.m = vars.map((x) => tf.variable(tf.zerosLike(x), false));
    this.v = vars.map((x) => tf.variable(tf.zerosLike(x), false));
  }

  /**
   * Applies one update at learning rate `lr` from gradients aligned with `vars`; returns the gradient
   * norm before clipping. A gradient that is not finite is not applied (the norm says so).
   */
  async apply(grads: readonly tf.Tensor[], lr: number): Promise<number> {
    this.step += 1;
    const o = this.options;
    const normT = tf.tidy(() => tf.sqrt(tf.addN(grads.map((g) => tf.sum(tf.square(g))))));
    const norm = (await normT.data())[0]!;
    normT.dispose();
    // a NaN or infinite gradient would poison every weight and both moments: no step at all
    if (!Number.isFinite(norm)) {
      this.step -= 1;
      return norm;
    }
    const scale = o.maxGradNorm > 0 && norm > o.maxGradNorm ? o.maxGradNorm / (norm + 1e-6) : 1;
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
