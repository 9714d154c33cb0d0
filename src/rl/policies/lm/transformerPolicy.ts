// The language-model policy: a Hugging Face checkpoint (a user's, or a fresh small model written as
// one) on the engine or the tfjs decoder, writing each action as text, sampled with a KV cache, trained
// on exactly the token ids it sampled (plus the prompt and observation ids, each encoded once when it
// entered the context, with loss mask 0; through the model's chat template when it has one). It
// samples and scores; the learner owns the update.
import type { AgentRequest, PolicyStep, Trajectory, Turn } from '../../../shared/types';
import type { AdamWOptions } from '../../algo/adamw';
import { Rng } from '../../random';
import type { TrainSequence } from '../../algo/trainSequence';
import { MICROBATCH_POSITIONS, type Trainable } from '../../algo/gradients';
import { greedyView, type Policy, type PolicyContext, type PolicySample, type TrainablePolicy } from '../policy';
import { DemonstrationPolicy } from '../scripted/demonstrations';
import type { ChatFormat } from './chatFormat';
import { ModelPolicy, type SerialisableModel } from './modelPolicy';
import type { PolicyModel } from './models/policyModel';
import { sampleBatch, type SampledSequence, type SampleOptions } from './sampler';
import type { Tokenizer } from './tokenizer';
import type { TokenConstraint } from './constraint';

/**
 * The ids of one trajectory concatenated over turns (never re-encoded) as a training sequence: position
 * t predicts id t+1; mask 1 on ids the policy generated (0 on prompt and observation ids, and on a
 * demonstration's deliberate mistake). With a constraint, the actions sampled under it carry the ids
 * the grammar allowed at each of their positions, under the budget the sampler gave the action.
 */
export function trajectorySequence(
  t: Trajectory,
  constraint?: TokenConstraint,
  /** The tokens an action may take after a prompt of this many (the sampler's row budget). */
  budget: (promptLength: number) => number = () => Infinity,
): TrainSequence | undefined {
  return turnsSequence(t.turns, t.advantage, constraint, budget);
}

/**
 * A trajectory as training sequences, one per segment: an agent program that rewrote its history began
 * a new segment (PolicyStep.tokens.segment), whose tokens were sampled after its own context, not after
 * the turns before it. Sequences with nothing to train are left out.
 */
export function trajectorySequences(t: Trajectory, constraint?: TokenConstraint, budget: (promptLength: number) => number = () => Infinity): TrainSequence[] {
  const parts: Turn[][] = [];
  for (const turn of t.turns) {
    if (parts.length === 0 || turn.policy.tokens?.segment) parts.push([]);
    parts[parts.length - 1]!.push(turn);
  }
  return parts.map((turns) => turnsSequence(turns, t.advantage, constraint, budget)).filter((s): s is TrainSequence => s !== undefined);
}

function turnsSequence(
  turns: readonly Turn[],
  advantage: number,
  constraint: TokenConstraint | undefined,
  budget: (promptLength: number) => number,
): TrainSequence | undefined {
  const ids: number[] = [];
  const mask: number[] = [];
  const behaviour: number[] = [];
  const allowed: (Int32Array | undefined)[] = [];
  let constrained = false;
  for (const turn of turns) {
    const tk = turn.policy.tokens;
    if (!tk) return undefined;
    for (const id of tk.context) {
      ids.push(id);
      mask.push(0);
      behaviour.push(0);
      allowed.push(undefined);
    }
    const imitate = tk.imitate === false ? 0 : 1;
    if (tk.constrained && !constraint) {
      throw new Error(
        'TransformerPolicy: an action sampled under the action grammar, trained without it (its log-probs are over the allowed tokens only). Fix: train with policyOptions.constrainedDecoding true, as it was sampled',
      );
    }
    const sets = constraint && tk.constrained ? constraint.allowedSets(tk.sampled, budget(ids.length)) : undefined;
    constrained ||= sets !== undefined;
    tk.sampled.forEach((id, i) => {
      ids.push(id);
      mask.push(imitate);
      behaviour.push(tk.logprobs[i]!);
      allowed.push(sets?.[i]);
    });
  }
  // the first token has nothing before it to predict it from: such a sequence cannot be trained
  if (ids.length < 2 || mask[0] === 1) return undefined;
  return {
    inputs: ids.slice(0, -1),
    targets: ids.slice(1),
    mask: mask.slice(1),
    behaviour: behaviour.slice(1),
    advantage,
    ...(constrained ? { allowed: allowed.slice(1) } : {}),
  };
}

/**
 * Another engine that samples for the policy (llama.cpp): it draws the options it can draw exactly as
 * the policy's own sampler defines them (else the policy samples itself), and loads the policy's
 * weights before the next sample once they changed.
 */
export interface RolloutEngine {
  accepts(o: SampleOptions): boolean;
  sample(prompts: readonly (readonly number[])[], o: SampleOptions, rng: Rng, rowSeeds?: readonly number[]): Promise<SampledSequence[]>;
  /** The policy's weights changed (an update, a restored state or checkpoint). */
  weightsChanged(): void;
  dispose(): Promise<void>;
}

/** What the policy needs of its model besides sampling: the frozen reference and the learner's view of either. */
export interface ModelParts<M extends PolicyModel> {
  /** Samples in place of the model where it can (absent: the model samples). */
  readonly rollout?: RolloutEngine;
  readonly reference: M;
  differentiable(model: M): Trainable;
  /** Prompts through the model's chat template (token in, token out); absent: observations are encoded as they are. */
  readonly chat?: ChatFormat;
  /** Padded positions per forward and backward pass (gradient accumulation over micro-batches). */
  readonly microBatchPositions?: number;
  /** Why the model computes on its path (chooseComputePath), recorded with the run beside the compute string. */
  readonly computeReason?: string;
}

export class TransformerPolicy<M extends SerialisableModel = SerialisableModel> extends ModelPolicy<M> implements TrainablePolicy {
  constructor(
    model: M,
    tokenizer: Tokenizer,
    public sampling: SampleOptions,
    optimizer: AdamWOptions,
    readonly compute: string,
    private readonly parts: ModelParts<M>,
  ) {
    // the rollout engine holds a copy of the weights: the shared step and state code tell it of changes
    super(model, parts.reference, tokenizer, optimizer, parts.rollout);
  }

  get computeReason(): string | undefined {
    return this.parts.computeReason;
  }

  /** The chat format the policy prompts with, if any. */
  get chat(): ChatFormat | undefined {
    return this.parts.chat;
  }

  /** The model embeds positions 0 … contextLength − 1: a sequence scores at most that many. */
  get maxPositions(): number {
    return this.model.config.contextLength;
  }

  get vocabularySize(): number {
    return this.model.config.vocabSize;
  }

  get temperature(): number {
    return this.sampling.temperature > 0 ? this.sampling.temperature : 1;
  }

  demonstrator(agent: Policy): Policy {
    const chat = this.parts.chat;
    // under a grammar with a chat model, the policy's actions end with the end-of-turn token: so do the demonstrations
    const end = chat && this.sampling.constraint ? chat.eosIds[0] : undefined;
    return new DemonstrationPolicy(agent, this.tokenizer, chat ? { format: chat, ...(end !== undefined ? { end } : {}) } : undefined);
  }

  sample(contexts: readonly PolicyContext[], rng: Rng): Promise<PolicySample[]> {
    return this.sampleWith(this.sampling, contexts, rng);
  }

  /** Samples under explicit options (the greedy view passes temperature 0; nothing is swapped). */
  private async sampleWith(sampling: SampleOptions, contexts: readonly PolicyContext[], rng: Rng): Promise<PolicySample[]> {
    const news: number[][] = [];
    const segments: boolean[] = [];
    /** An agent program's requests the template could not render (the program's own input): answered by no sample. */
    const refused = new Map<number, string>();
    const prompts = contexts.map((ctx, i) => {
      let past: number[] = [];
      for (const turn of ctx.turns) {
        const tk = turn.policy.tokens;
        if (!tk) throw new Error('TransformerPolicy: a turn without token ids (token in, token out)');
        // a new segment (an agent program rewrote its history): the context starts again
        if (tk.segment) past = [];
        past.push(...tk.context, ...tk.sampled);
      }
      // encoded once, here: as it is, or as the chat template's next message
      const chat = this.parts.chat;
      const last = ctx.turns[ctx.turns.length - 1]?.policy.tokens?.sampled ?? [];
      const request = ctx.observation.request;
      if (request && !chat)
        throw new Error(
          'an agent program\'s requests are chat conversations, and this model prompts without a chat template. Fix: policyOptions.chatTemplate "auto" with an instruct checkpoint',
        );
      let fresh: number[];
      if (request) {
        try {
          fresh = chat!.request(request, last);
        } catch (e) {
          refused.set(i, `the chat template cannot render this request (${(e as Error).message.split('\n')[0]})`);
          news.push([]);
          segments.push(false);
          return [];
        }
      } else
        fresh = !chat ? this.tokenizer.encode(ctx.observation.text) : ctx.turns.length === 0 ? chat.first(ctx.observation) : chat.next(ctx.observation, last);
      const segment = request !== undefined && request.continuesFrom === 0;
      if (segment) past = [];
      segments.push(segment && ctx.turns.length > 0);
      news.push(fresh);
      return [...past, ...fresh];
    });
    // an episode's own stream (the concurrent schedule) seeds its row: the draw is independent of the batch
    const rowSeeds = contexts.every((c) => c.rng) ? contexts.map((c) => c.rng!.uint32()) : undefined;
    // the version of the last completed update: an update's steps may land between this batch and the
    // next (async), but not within one, and the version moves on only when the whole update is done
    const version = this.versionCounter;
    const live = prompts.map((_, i) => i).filter((i) => !refused.has(i));
    const sampledLive = live.length
      ? await this.sampleTokens(
          live.map((i) => prompts[i]!),
          rng,
          sampling,
          rowSeeds && live.map((i) => rowSeeds[i]!),
        )
      : [];
    let next = 0;
    const out = prompts.map((_, i) => (refused.has(i) ? undefined : sampledLive[next++]));
    return out.map((sampled, i) => {
      if (!sampled) return { text: '', step: { behaviourLogprob: 0, policyVersion: version }, refused: refused.get(i)! };
      const request = contexts[i]!.observation.request;
      const s = request ? this.cutForRequest(sampled, request) : sampled;
      const step: PolicyStep = {
        behaviourLogprob: s.logprobs.reduce((a, b) => a + b, 0),
        policyVersion: version,
        tokens: {
          context: news[i]!,
          sampled: s.tokens,
          logprobs: s.logprobs,
          ...(s.constrained ? { constrained: true } : {}),
          ...(segments[i] ? { segment: true } : {}),
        },
      };
      const text = this.parts.chat ? this.parts.chat.actionText(s.text) : s.text;
      return {
        text,
        step,
        ...(s.stopReason === 'context' && s.tokens.length === 0 ? { exhausted: true } : {}),
        ...(request
          ? { finish: s.stopReason === 'stop' ? ('stop' as const) : ('length' as const), decode: (ids: readonly number[]) => this.tokenizer.decode([...ids]) }
          : {}),
      };
    });
  }

  /**
   * An agent program's answer within its request's max_tokens and before its first stop string: the
   * sample cut there (a prefix of a sample is a sample of that prefix; its tokens and log-probs stand).
   */
  private cutForRequest(s: SampledSequence, r: AgentRequest): SampledSequence {
    let n = s.tokens.length;
    let stopReason = s.stopReason;
    if (r.maxTokens !== undefined && n > r.maxTokens) {
      n = r.maxTokens;
      stopReason = 'max_tokens';
    }
    let text = n === s.tokens.length ? s.text : this.tokenizer.decode(s.tokens.slice(0, n));
    const stops = (r.stop ?? []).filter((t) => t !== '' && text.includes(t));
    if (stops.length > 0) {
      // the fewest tokens whose text holds a stop string: the answer is the text before it
      const holds = (k: number): boolean => stops.some((t) => this.tokenizer.decode(s.tokens.slice(0, k)).includes(t));
      let lo = 1,
        hi = n;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (holds(mid)) hi = mid;
        else lo = mid + 1;
      }
      n = lo;
      const full = this.tokenizer.decode(s.tokens.slice(0, n));
      text = full.slice(0, Math.min(...stops.map((t) => (full.includes(t) ? full.indexOf(t) : Infinity))));
      stopReason = 'stop';
    }
    if (n === s.tokens.length && stopReason === s.stopReason) return s;
    return { ...s, tokens: s.tokens.slice(0, n), logprobs: s.logprobs.slice(0, n), text, stopReason };
  }

  /** Continues token-id prompts; with `rowSeeds`, each row draws from its own stream (the concurrent schedule). */
  async sampleTokens(
    prompts: readonly (readonly number[])[],
    rng: Rng,
    sampling: SampleOptions = this.sampling,
    rowSeeds?: readonly number[],
  ): Promise<SampledSequence[]> {
    const rollout = this.parts.rollout;
    if (rollout?.accepts(sampling)) return rollout.sample(prompts, sampling, rng, rowSeeds);
    return sampleBatch(this.model, this.tokenizer, prompts, sampling, rowSeeds ? rowSeeds.map((seed) => new Rng(seed)) : rng);
  }

  sequence(t: Trajectory): TrainSequence | undefined {
    const { maxNewTokens } = this.sampling;
    return trajectorySequence(t, this.sampling.constraint, (n) => Math.min(maxNewTokens, this.model.config.contextLength - n));
  }

  sequences(t: Trajectory): TrainSequence[] {
    const { maxNewTokens } = this.sampling;
    return trajectorySequences(t, this.sampling.constraint, (n) => Math.min(maxNewTokens, this.model.config.contextLength - n));
  }

  trainable(model: 'current' | 'reference'): Trainable {
    return this.parts.differentiable(model === 'reference' ? this.reference : this.model);
  }

  /** A model's own micro-batch positions where it sets them; forward-only passes take twice a training pass's. */
  get passBudget(): { readonly train: number; readonly logprobs: number } {
    const train = this.parts.microBatchPositions ?? MICROBATCH_POSITIONS;
    return { train, logprobs: 2 * train };
  }

  greedy(): Policy {
    return greedyView(
      () => this.versionCounter,
      this.compute,
      (contexts, rng) => this.sampleWith({ ...this.sampling, temperature: 0 }, contexts, rng),
    );
  }
}
