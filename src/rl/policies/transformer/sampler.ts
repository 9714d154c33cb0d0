// Batched sampling with a KV cache. Prompts of different lengths are left-padded; padding is masked
// out of attention and positions count real tokens only, so every row computes exactly what it would
// alone. Stop strings are matched on the decoded text of the sampled tokens, so a tag split across
// tokens still stops generation. Each sampled token's behaviour log-prob is recorded: log softmax
// (logits / temperature) of the full distribution (what the learner recomputes; top-k / top-p
// truncation only restricts which tokens can be drawn).
import * as tf from '@tensorflow/tfjs';
import type { Rng } from '../../random';
import type { Gpt, KvCache } from './model';
import type { Tokenizer } from './tokenizer';

export interface SampleOptions {
  /** 0 = greedy. */
  readonly temperature: number;
  /** 0 = off. */
  readonly topK: number;
  /** 1 = off. */
  readonly topP: number;
  readonly maxNewTokens: number;
  /** Generation of a row stops once its decoded text contains one of these (the stop text is kept). */
  readonly stop: readonly string[];
  /** A protocol-specific end of action on the decoded text (e.g. a closed code fence). */
  readonly stopWhen?: (text: string) => boolean;
}

export type StopReason = 'stop' | 'max_tokens' | 'context';

export interface SampledSequence {
  readonly tokens: number[];
  /** Behaviour log-prob of each sampled token. */
  readonly logprobs: number[];
  readonly text: string;
  readonly stopReason: StopReason;
}

/** Decoding state of a batch: the cache and each row's next position. */
export interface BatchState {
  cache: KvCache;
  /** Next absolute position of each row (= its real length so far). */
  readonly lengths: number[];
}

/** Prefill: left-padded prompts [B][*] → last-position logits [B, V] and the cache. */
export function prefill(model: Gpt, prompts: readonly (readonly number[])[]): { state: BatchState; logits: tf.Tensor2D } {
  const B = prompts.length;
  const L = Math.max(1, ...prompts.map((p) => p.length));
  const ids = new Int32Array(B * L);
  const pos = new Int32Array(B * L);
  const mask = new Float32Array(B * L);
  prompts.forEach((p, b) => {
    const pad = L - p.length;
    for (let t = 0; t < L; t++) {
      const real = t >= pad;
      ids[b * L + t] = real ? p[t - pad]! : 0;
      pos[b * L + t] = real ? t - pad : 0;
      mask[b * L + t] = real ? 1 : 0;
    }
  });
  // Tensors that outlive the tidy scope are kept explicitly; everything else is freed with it.
  let result: { state: BatchState; logits: tf.Tensor2D } | undefined;
  tf.tidy(() => {
    const keyMask = tf.tensor2d(mask, [B, L]);
    const out = model.run(tf.tensor2d(ids, [B, L], 'int32'), tf.tensor2d(pos, [B, L], 'int32'), keyMask, undefined);
    const logits = tf.reshape<tf.Rank.R2>(tf.slice(out.logits, [0, L - 1, 0], [B, 1, -1]), [B, -1]);
    const cache: KvCache = { k: out.k.map((t) => tf.keep(t)), v: out.v.map((t) => tf.keep(t)), keyMask: tf.keep(keyMask) };
    result = { state: { cache, lengths: prompts.map((p) => p.length) }, logits: tf.keep(logits) };
  });
  return result!;
}

/** One decoding step: the next token of every row → logits [B, V]; the cache grows by one. */
export function decodeStep(model: Gpt, state: BatchState, tokens: readonly number[]): tf.Tensor2D {
  const B = tokens.length;
  const old = state.cache;
  let logits: tf.Tensor2D | undefined;
  let cache: KvCache | undefined;
  tf.tidy(() => {
    const keyMask = tf.concat<tf.Tensor2D>([old.keyMask, tf.ones([B, 1])], 1);
    const out = model.run(
      tf.tensor2d(Int32Array.from(tokens), [B, 1], 'int32'),
      tf.tensor2d(Int32Array.from(state.lengths), [B, 1], 'int32'),
      keyMask,
      old,
    );
    logits = tf.keep(tf.reshape<tf.Rank.R2>(out.logits, [B, -1]));
    cache = { k: out.k.map((t) => tf.keep(t)), v: out.v.map((t) => tf.keep(t)), keyMask: tf.keep(keyMask) };
  });
  disposeCache(old);
  state.cache = cache!;
  for (let b = 0; b < B; b++) state.lengths[b]! += 1;
  return logits!;
}

export function disposeCache(c: KvCache): void {
  tf.dispose([...c.k, ...c.v, c.keyMask]);
}

/** log softmax(logits / T) in float64. T = 0 is treated as 1 (greedy's log-prob). */
export function logSoftmaxRow(logits: Float32Array, temperature: number): Float64Array {
  const t = temperature > 0 ? temperature : 1;
  let max = -Infinity;
  for (const x of logits) max = Math.max(max, x / t);
  let sum = 0;
  for (const x of logits) sum += Math.exp(x / t - max);
  const lse = max + Math.log(sum);
  return Float64Array.from(logits, (x) => x / t - lse);
}

/** Draws a token from one row's log-probs under temperature / top-k / top-p. */
export function drawToken(logp: Float64Array, o: Pick<SampleOptions, 'temperature' | 'topK' | 'topP'>, rng: Rng): number {
  if (o.temperature <= 0) {
    let best = 0;
    for (let i = 1; i < logp.length; i++) if (logp[i]! > logp[best]!) best = i;
    return best;
  }
  if (o.topK <= 0 && o.topP >= 1) {
    // the whole distribution: inverse CDF, no allocation (the common case, once per token per row)
    let u = rng.next();
    for (let i = 0; i < logp.length; i++) {
      u -= Math.exp(logp[i]!);
      if (u < 0) return i;
    }
    return logp.length - 1;
  }
  let candidates = Array.from(logp.keys());
  if (o.topK > 0 || o.topP < 1) {
    candidates.sort((a, b) => logp[b]! - logp[a]!);
    if (o.topK > 0) candidates = candidates.slice(0, o.topK);
    if (o.topP < 1) {
      let acc = 0;
      const kept: number[] = [];
      for (const c of candidates) {
        kept.push(c);
        acc += Math.exp(logp[c]!);
        if (acc >= o.topP) break;
      }
      candidates = kept;
    }
  }
  const weights = candidates.map((c) => Math.exp(logp[c]!));
  const total = weights.reduce((a, b) => a + b, 0);
  let u = rng.next() * total;
  for (let i = 0; i < candidates.length; i++) {
    u -= weights[i]!;
    if (u < 0) return candidates[i]!;
  }
  return candidates[candidates.length - 1]!;
}

/**
 * Samples a continuation for every prompt. A row ends at a stop string, at maxNewTokens, or when its
 * context is full (prompt + new tokens = the model's context length).
 */
export function sampleBatch(model: Gpt, tokenizer: Tokenizer, prompts: readonly (readonly number[])[], o: SampleOptions, rng: Rng): SampledSequence[] {
  const B = prompts.length;
  const P = model.config.contextLength;
  const rows = prompts.map((p) => ({ tokens: [] as number[], logprobs: [] as number[], text: '', stopReason: undefined as StopReason | undefined, budget: Math.min(o.maxNewTokens, P - p.length) }));
  rows.forEach((r) => {
    if (r.budget <= 0) r.stopReason = 'context';
  });
  if (rows.every((r) => r.stopReason)) return rows.map((r) => ({ tokens: r.tokens, logprobs: r.logprobs, text: r.text, stopReason: r.stopReason! }));
  const started = prefill(model, prompts.map((p) => (p.length > 0 ? p : [0])));
  const state = started.state;
  let logits = started.logits;
  try {
    for (;;) {
      const data = logits.dataSync() as Float32Array;
      const V = data.length / B;
      logits.dispose();
      const next: number[] = [];
      for (let b = 0; b < B; b++) {
        const r = rows[b]!;
        if (r.stopReason) {
          next.push(0);
          continue;
        }
        const logp = logSoftmaxRow(data.subarray(b * V, (b + 1) * V), o.temperature);
        const tok = drawToken(logp, o, rng);
        r.tokens.push(tok);
        r.logprobs.push(logp[tok]!);
        r.text += tokenizer.decode([tok]);
        if (o.stop.some((s) => r.text.includes(s)) || o.stopWhen?.(r.text)) r.stopReason = 'stop';
        else if (r.tokens.length >= r.budget) r.stopReason = r.budget < o.maxNewTokens ? 'context' : 'max_tokens';
        next.push(tok);
      }
      if (rows.every((r) => r.stopReason)) break;
      logits = decodeStep(model, state, next);
    }
  } finally {
    disposeCache(state.cache);
  }
  // Decode once more from the ids: per-token decoding and whole-sequence decoding agree for the
  // tokenizers used here, but the ids are the record; the text is only for parsing.
  return rows.map((r) => ({ tokens: r.tokens, logprobs: r.logprobs, text: tokenizer.decode(r.tokens), stopReason: r.stopReason! }));
}
