// Batched sampling with a KV cache. Prompts of different lengths are left-padded; padding is masked
// out of attention and positions count real tokens only, so every row computes exactly what it would
// alone. Stop strings are matched on the decoded text of the sampled tokens, so a tag split across
// tokens still stops generation. Each sampled token's behaviour log-prob is recorded: log softmax
// (logits / temperature) of the full distribution (what the learner recomputes; top-k / top-p
// truncation only restricts which tokens can be drawn). Under constrained decoding (a grammar of the
// environment's actions) disallowed tokens are removed before the draw and the log-prob is over the
// allowed ones, as the learner recomputes it (constraint.ts); the grammar alone then ends the action
// (at a whole action, or a chat model's end-of-turn token), not the stop strings. A model that draws
// in its own threads (the engine: models/engine/engineDraw.ts) draws every live row of a step there, the
// same tokens and log-probs bit for bit; elsewhere (tfjs) sampleRow draws them here.
import * as tf from '@tensorflow/tfjs';
import { assertBackendHealthy } from '../../tfjsHealth';
import type { Rng } from '../../random';
import type { TokenConstraint } from './constraint';
import type { CausalLm, DrawnRow, KvCache, RowDraw } from './models/policyModel';
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
  /** Only tokens that keep the action within the environment's grammar may be drawn (log-probs renormalised over them). */
  readonly constraint?: TokenConstraint;
  /** Called once the prompts' pass is done, before the first draw (a bench times prefill and decoding apart). */
  readonly onPrefilled?: () => void;
}

export type StopReason = 'stop' | 'max_tokens' | 'context';

export interface SampledSequence {
  readonly tokens: number[];
  /** Behaviour log-prob of each sampled token. */
  readonly logprobs: number[];
  readonly text: string;
  readonly stopReason: StopReason;
  /** Drawn under a grammar constraint: the log-probs are over the allowed tokens. */
  readonly constrained?: true;
}

/** Decoding state of a batch on the tfjs decoder: the keys and values so far (a tfjs cache that grows by concatenation), and each row's next position. */
export interface BatchState {
  cache: KvCache;
  /** Next absolute position of each row (= its real length so far). */
  readonly lengths: number[];
}

/** Rows per prefill pass. */
const PREFILL_ROWS = 32;

/** The tfjs forward pass of a model, or the reason there is none (a model that decodes itself). */
function runOf(model: CausalLm): NonNullable<CausalLm['run']> {
  if (!model.run) throw new Error('sampler: the model has neither a tfjs forward pass nor its own decoding session');
  return model.run.bind(model);
}

/** Prefill: left-padded prompts [B][*] → last-position logits [B, V] and the decoding state. */
export function prefill(model: CausalLm, prompts: readonly (readonly number[])[]): { state: BatchState; logits: tf.Tensor2D } {
  const run = runOf(model);
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
    // In chunks of rows: attention scores are [rows, H, L, L], and 256 rows of 140 tokens at once
    // grew the wasm heap past 1 GB (it never shrinks) and took seconds to grow it.
    const parts: { logits: tf.Tensor2D; k: tf.Tensor4D[]; v: tf.Tensor4D[] }[] = [];
    const allIds = tf.tensor2d(ids, [B, L], 'int32');
    const allPos = tf.tensor2d(pos, [B, L], 'int32');
    const chunk = model.prefillRows ?? PREFILL_ROWS;
    for (let r0 = 0; r0 < B; r0 += chunk) {
      const n = Math.min(chunk, B - r0);
      const rows = (t: tf.Tensor2D): tf.Tensor2D => (n === B ? t : tf.slice(t, [r0, 0], [n, L]));
      const out = run(rows(allIds), rows(allPos), { keyMask: rows(keyMask), scoped: true, lastOnly: true });
      parts.push({ logits: tf.reshape<tf.Rank.R2>(out.logits, [n, -1]), k: out.k, v: out.v });
    }
    const join = <T extends tf.Tensor>(ts: T[]): T => (ts.length === 1 ? ts[0]! : tf.concat(ts, 0));
    const logits = join(parts.map((p) => p.logits));
    const k = parts[0]!.k.map((_, l) => join(parts.map((p) => p.k[l]!)));
    const v = parts[0]!.v.map((_, l) => join(parts.map((p) => p.v[l]!)));
    const lengths = prompts.map((p) => p.length);
    const cache: KvCache = { k: k.map((t) => tf.keep(t)), v: v.map((t) => tf.keep(t)), keyMask: tf.keep(keyMask) };
    result = { state: { cache, lengths }, logits: tf.keep(logits) };
  });
  return result!;
}

/** One decoding step: the next token of every row → logits [B, V]; the cache grows by one. */
export function decodeStep(model: CausalLm, state: BatchState, tokens: readonly number[]): tf.Tensor2D {
  const B = tokens.length;
  const ids = (): tf.Tensor2D => tf.tensor2d(Int32Array.from(tokens), [B, 1], 'int32');
  const positions = (): tf.Tensor2D => tf.tensor2d(Int32Array.from(state.lengths), [B, 1], 'int32');
  const old = state.cache;
  const run = runOf(model);
  let logits: tf.Tensor2D | undefined;
  let cache: KvCache | undefined;
  tf.tidy(() => {
    const keyMask = tf.concat<tf.Tensor2D>([old.keyMask, tf.ones([B, 1])], 1);
    const out = run(ids(), positions(), { keyMask, past: old, scoped: true });
    logits = tf.keep(tf.reshape<tf.Rank.R2>(out.logits, [B, -1]));
    cache = { k: out.k.map((t) => tf.keep(t)), v: out.v.map((t) => tf.keep(t)), keyMask: tf.keep(keyMask) };
  });
  tf.dispose([...old.k, ...old.v, old.keyMask]);
  state.cache = cache!;
  for (let b = 0; b < B; b++) state.lengths[b]! += 1;
  return logits!;
}

/** Frees a batch's keys and values. */
export function disposeState(state: BatchState): void {
  tf.dispose([...state.cache.k, ...state.cache.v, state.cache.keyMask]);
}

/** log softmax(logits / T) in float64. T = 0 is treated as 1 (greedy's log-prob). */
export function logSoftmaxRow(logits: Float32Array, temperature: number): Float64Array {
  const inv = 1 / (temperature > 0 ? temperature : 1);
  return shiftedRow(logits, inv, logSumExp(logits, inv));
}

/** logits · inv − lse in float64: a row's log-probs from its log-normaliser. */
function shiftedRow(logits: Float32Array, inv: number, lse: number): Float64Array {
  const out = new Float64Array(logits.length);
  for (let i = 0; i < logits.length; i++) out[i] = logits[i]! * inv - lse;
  return out;
}

/** log Σ exp(x·inv) over a row, in float64 (indexed loops: a vocabulary of 151,936 is read twice per row and step). */
function logSumExp(logits: Float32Array, inv: number): number {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) {
    const v = logits[i]! * inv;
    if (v > max) max = v;
  }
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i]! * inv - max);
  return max + Math.log(sum);
}

/**
 * One row's next token and its behaviour log-prob. Without top-k or top-p (the usual case) the draw is
 * made over the row as it is, never materialising its log-probs: greedy takes the first maximum, a
 * sample walks the cumulative distribution; with them, the row's log-probs go through drawToken.
 */
export function sampleRow(logits: Float32Array, o: Pick<SampleOptions, 'temperature' | 'topK' | 'topP'>, rng: Rng): { token: number; logp: number } {
  if (o.topK > 0 || o.topP < 1) {
    const logp = logSoftmaxRow(logits, o.temperature);
    const token = drawToken(logp, o, rng);
    return { token, logp: logp[token]! };
  }
  const inv = 1 / (o.temperature > 0 ? o.temperature : 1);
  const lse = logSumExp(logits, inv);
  let token = 0;
  if (o.temperature <= 0) {
    for (let i = 1; i < logits.length; i++) if (logits[i]! > logits[token]!) token = i;
  } else {
    let u = rng.next();
    token = -1;
    for (let i = 0; i < logits.length; i++) {
      u -= Math.exp(logits[i]! * inv - lse);
      if (u < 0) {
        token = i;
        break;
      }
    }
    if (token < 0) token = lastDrawable(logits);
  }
  return { token, logp: logits[token]! * inv - lse };
}

/** Where rounding left the draw's u ≥ 0: the last token that can be drawn (a masked one, −∞, has probability 0). */
function lastDrawable(row: Float32Array | Float64Array): number {
  let last = row.length - 1;
  while (last > 0 && row[last] === -Infinity) last--;
  return last;
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
    return lastDrawable(logp);
  }
  // masked tokens (a grammar's) are never candidates
  let candidates = Array.from(logp.keys()).filter((i) => logp[i]! > -Infinity);
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

/** A batch being decoded: the last logits [B·V], one step at a time, and what to free at the end. */
interface Stepper {
  readonly logits: Float32Array;
  step(tokens: readonly number[]): Promise<Float32Array>;
  /** The model's own threads draw rows (the engine's); absent: sampleRow here. */
  drawRows?(logits: Float32Array, rows: readonly RowDraw[], inv: number): DrawnRow[];
  dispose(): void;
}

/** What the draw reads of a row being sampled. */
interface LiveRow {
  readonly tokens: readonly number[];
  readonly stopReason: StopReason | undefined;
  readonly budget: number;
  readonly state: number | undefined;
}

/**
 * Every live row's token and log-prob (undefined for a finished row), drawn by the model's threads
 * exactly as sampleRow draws them: the normaliser there, and without top-k / top-p the draw too, from
 * uniforms drawn here one per row in row order (sampleRow's order of rng calls); with top-k or top-p
 * the truncated draw stays here (drawToken) on the log-probs from that normaliser. A grammar's mask is
 * applied to the drawer's copy of each row (and to a copy here for a truncated draw).
 */
function drawInThreads(
  drawRows: NonNullable<Stepper['drawRows']>,
  data: Float32Array,
  V: number,
  rows: readonly LiveRow[],
  o: SampleOptions,
  rowRng: (b: number) => Rng,
): ({ token: number; logp: number } | undefined)[] {
  const inv = 1 / (o.temperature > 0 ? o.temperature : 1);
  const truncated = o.topK > 0 || o.topP < 1;
  const c = o.constraint;
  const maskOf = (r: LiveRow) => (row: Float32Array) => c!.maskRow(row, r.state!, r.budget - r.tokens.length);
  const live = rows.flatMap((r, b) => (r.stopReason ? [] : [b]));
  const requests = live.map((b): RowDraw => ({
    row: b,
    ...(!truncated && o.temperature > 0 ? { u: rowRng(b).next() } : {}),
    ...(c ? { mask: maskOf(rows[b]!) } : {}),
  }));
  const drawn = drawRows(data, requests, inv);
  const out: ({ token: number; logp: number } | undefined)[] = rows.map(() => undefined);
  live.forEach((b, i) => {
    const { token, lse } = drawn[i]!;
    if (!truncated) {
      out[b] = { token, logp: data[b * V + token]! * inv - lse };
      return;
    }
    let row = data.subarray(b * V, (b + 1) * V);
    if (c) {
      row = Float32Array.from(row);
      maskOf(rows[b]!)(row);
    }
    const logp = shiftedRow(row, inv, lse);
    const t = drawToken(logp, o, rowRng(b));
    out[b] = { token: t, logp: logp[t]! };
  });
  return out;
}

/** The model's own decoding session, or the tfjs prefill and steps with their cache (read asynchronously: WebGPU has no synchronous read in Node). */
async function stepperOf(model: CausalLm, inputs: readonly (readonly number[])[], capacity: number): Promise<Stepper> {
  if (model.session) return model.session(inputs, capacity);
  const started = prefill(model, inputs);
  const read = async (t: tf.Tensor2D): Promise<Float32Array> => {
    try {
      const data = (await t.data()) as Float32Array;
      assertBackendHealthy('the sampled tokens');
      return data;
    } finally {
      t.dispose();
    }
  };
  let first: Float32Array;
  try {
    first = await read(started.logits);
  } catch (e) {
    disposeState(started.state);
    throw e;
  }
  return { logits: first, step: (tokens) => read(decodeStep(model, started.state, tokens)), dispose: () => disposeState(started.state) };
}

/** Whether generated text has reached its end: it contains a stop string, or passes the stop test. */
export function stopsAt(text: string, stop: readonly string[], stopWhen?: (text: string) => boolean): boolean {
  return stop.some((s) => text.includes(s)) || (stopWhen?.(text) ?? false);
}

/**
 * Samples a continuation for every prompt. A row ends at a stop string, at maxNewTokens, or when its
 * context is full (prompt + new tokens = the model's context length). `rng`: one stream for the batch
 * (rows draw from it in turn), or one stream per row (each row's draws independent of the others').
 */
export async function sampleBatch(
  model: CausalLm,
  tokenizer: Tokenizer,
  prompts: readonly (readonly number[])[],
  o: SampleOptions,
  rng: Rng | readonly Rng[],
): Promise<SampledSequence[]> {
  const rowRng = (b: number): Rng => (Array.isArray(rng) ? (rng as readonly Rng[])[b]! : (rng as Rng));
  const B = prompts.length;
  const P = model.config.contextLength;
  // a model whose sessions hold fewer rows (a KV cache sized by its memory plan) samples them in turn
  const most = model.sessionRows?.(Math.min(P, Math.max(...prompts.map((p) => p.length)) + o.maxNewTokens));
  if (most !== undefined && B > most) {
    const out: SampledSequence[] = [];
    for (let b0 = 0; b0 < B; b0 += most) {
      const idx = prompts.slice(b0, b0 + most).map((_, i) => b0 + i);
      out.push(
        ...(await sampleBatch(
          model,
          tokenizer,
          idx.map((i) => prompts[i]!),
          o,
          Array.isArray(rng) ? idx.map((i) => (rng as readonly Rng[])[i]!) : rng,
        )),
      );
    }
    return out;
  }
  const rows = prompts.map((p) => ({
    tokens: [] as number[],
    logprobs: [] as number[],
    text: '',
    stopReason: undefined as StopReason | undefined,
    budget: Math.min(o.maxNewTokens, P - p.length),
    /** Where the action is in the grammar (constrained decoding). */
    state: o.constraint?.start(),
  }));
  const constrained = o.constraint ? { constrained: true as const } : {};
  rows.forEach((r) => {
    if (r.budget <= 0) r.stopReason = 'context';
  });
  if (rows.every((r) => r.stopReason))
    return rows.map((r) => ({ tokens: r.tokens, logprobs: r.logprobs, text: r.text, stopReason: r.stopReason!, ...constrained }));
  // a row whose context is already full samples nothing: it is prefilled as one token, so the batch's
  // prefill never runs past the context
  const inputs = prompts.map((p, b) => (p.length > 0 && rows[b]!.budget > 0 ? p : [0]));
  const longest = Math.max(1, ...inputs.map((p) => p.length));
  const capacity = longest + Math.max(...rows.map((r) => r.budget));
  const stepper = await stepperOf(model, inputs, capacity);
  o.onPrefilled?.();
  try {
    let data = stepper.logits;
    for (;;) {
      const V = data.length / B;
      // the engine draws every live row in its threads (bit for bit as sampleRow); else row by row here
      const drawn = stepper.drawRows ? drawInThreads(stepper.drawRows.bind(stepper), data, V, rows, o, rowRng) : undefined;
      const next: number[] = [];
      for (let b = 0; b < B; b++) {
        const r = rows[b]!;
        if (r.stopReason) {
          next.push(0);
          continue;
        }
        let pick = drawn?.[b];
        if (!pick) {
          let row = data.subarray(b * V, (b + 1) * V);
          if (o.constraint) {
            row = Float32Array.from(row);
            o.constraint.maskRow(row, r.state!, r.budget - r.tokens.length);
          }
          pick = sampleRow(row, o, rowRng(b));
        }
        const { token: tok, logp } = pick;
        r.tokens.push(tok);
        r.logprobs.push(logp);
        r.text += tokenizer.decode([tok]);
        if (o.constraint) {
          r.state = o.constraint.advance(r.state!, tok);
          if (r.state === undefined) throw new Error('sampler: drew a token outside the grammar (a bug: disallowed tokens are masked)');
        }
        // under a grammar the grammar alone ends the action (a chat model's with its end-of-turn token)
        if (r.state !== undefined ? o.constraint!.finished(r.state) : stopsAt(r.text, o.stop, o.stopWhen)) r.stopReason = 'stop';
        else if (r.tokens.length >= r.budget) r.stopReason = r.budget < o.maxNewTokens ? 'context' : 'max_tokens';
        next.push(tok);
      }
      if (rows.every((r) => r.stopReason)) break;
      data = await stepper.step(next);
    }
  } finally {
    stepper.dispose();
  }
  // Decode once more from the ids: per-token decoding and whole-sequence decoding agree for the
  // tokenizers used here, but the ids are the record; the text is only for parsing.
  return rows.map((r) => ({ tokens: r.tokens, logprobs: r.logprobs, text: tokenizer.decode(r.tokens), stopReason: r.stopReason!, ...constrained }));
}
