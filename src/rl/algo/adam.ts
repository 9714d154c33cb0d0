// Adam (Kingma & Ba) over one flat parameter vector, with PyTorch's defaults and bias correction.
// Decoupled weight decay (AdamW) when weightDecay > 0.
export interface AdamOptions {
  readonly lr: number;
  readonly beta1?: number;
  readonly beta2?: number;
  readonly eps?: number;
  readonly weightDecay?: number;
}

export class Adam {
  readonly m: Float64Array;
  readonly v: Float64Array;
  step = 0;
  private readonly beta1: number;
  private readonly beta2: number;
  private readonly eps: number;
  private readonly weightDecay: number;

  constructor(size: number, private readonly options: AdamOptions) {
    this.m = new Float64Array(size);
    this.v = new Float64Array(size);
    this.beta1 = options.beta1 ?? 0.9;
    this.beta2 = options.beta2 ?? 0.999;
    this.eps = options.eps ?? 1e-8;
    this.weightDecay = options.weightDecay ?? 0;
  }

  /** params ← params − lr · m̂ / (√v̂ + eps), in place. grad: same length as params. */
  apply(params: Float64Array, grad: ArrayLike<number>): void {
    this.step += 1;
    const { lr } = this.options;
    const bc1 = 1 - this.beta1 ** this.step;
    const bc2 = 1 - this.beta2 ** this.step;
    for (let i = 0; i < params.length; i++) {
      const g = grad[i] as number;
      const m = (this.m[i] = this.beta1 * (this.m[i] as number) + (1 - this.beta1) * g);
      const v = (this.v[i] = this.beta2 * (this.v[i] as number) + (1 - this.beta2) * g * g);
      if (this.weightDecay > 0) params[i] = (params[i] as number) * (1 - lr * this.weightDecay);
      params[i] = (params[i] as number) - (lr * (m / bc1)) / (Math.sqrt(v / bc2) + this.eps);
    }
  }
}
