// The stages of createPolicy after the compute path, the same on every path (engine, tfjs decoder,
// llama.cpp sampling beside the engine): tokenizer → chat format → sampling → policy → warm start.
// Each is a small function of the policy options and what the stages before it made, so a path cannot
// build its policy another way (before, the engine and tfjs each had their own copy and disagreed
// about how a warm start sets the KL reference).
import type { TransformerOptions } from '../../shared/runConfig';
import type { AdamWOptions } from '../algo/adamw';
import type { RunEnvironment } from '../envs/environment';
import { STOP_TESTS } from '../envs/parsers';
import { ChatFormat } from './lm/chatFormat';
import { generationEos } from './lm/generationConfig';
import { ModelLoadError } from './lm/models/hfConfig';
import type { CandidateScorer } from './lm/models/candidateScorer';
import { CandidateScoringPolicy } from './lm/scoringPolicy';
import { restoreCheckpoint, type LoadedCheckpoint } from './lm/checkpoint';
import { TokenConstraint } from './lm/constraint';
import type { ModelPolicy, SerialisableModel } from './lm/modelPolicy';
import type { SampleOptions } from './lm/sampler';
import { HfTokenizer, type Tokenizer } from './lm/tokenizer';

/** Stage 1, the tokenizer: the folder's own, checked to fit the model's vocabulary, and the model's end-of-sequence ids. */
export function tokenizerOf(dir: string, vocabSize: number): { tokenizer: HfTokenizer; eos: number[] } {
  const tokenizer = HfTokenizer.fromDirectory(dir, 'model');
  tokenizer.checkFits(dir, vocabSize);
  return { tokenizer, eos: generationEos(dir, tokenizer) };
}

/** Stage 2, the chat format: the model's template with the config's system prompt and variables, unless the options or the tokenizer have none. */
export function chatFormatOf(
  o: Pick<TransformerOptions, 'chatTemplate' | 'systemPrompt' | 'chatTemplateVariables'>,
  tokenizer: HfTokenizer,
  eos: readonly number[],
): ChatFormat | undefined {
  if (o.chatTemplate === 'none' || !tokenizer.chatTemplate) return undefined;
  return new ChatFormat(tokenizer, eos, o.systemPrompt, o.chatTemplateVariables);
}

/** How the run's record names its chat template, and a template's rewriting of earlier turns that an episode does not apply. */
export function chatNote(chat: ChatFormat | undefined): string {
  if (!chat) return '';
  return chat.rewritesHistory
    ? ', chat template (its rewriting of earlier turns not applied: within an episode the model reads its turns as it wrote them)'
    : ', chat template';
}

/**
 * Stage 3, sampling: the options' settings, the environment's stop, the model's own end texts (the
 * chat template's end of turn, else the end-of-sequence tokens), and the action grammar when asked.
 */
export function samplingFor(
  o: TransformerOptions,
  env: RunEnvironment,
  tokenizer: Tokenizer,
  eos: readonly number[],
  chat: ChatFormat | undefined,
): SampleOptions {
  const stop = env.stop;
  const endTexts = chat ? [...chat.eosTexts] : eos.map((id) => tokenizer.decode([id]));
  return {
    temperature: o.temperature,
    topK: o.topK,
    topP: o.topP,
    maxNewTokens: o.maxNewTokens,
    stop: [...(stop?.strings ?? []), ...endTexts],
    ...(stop?.test ? { stopWhen: STOP_TESTS[stop.test] } : {}),
    ...constraintOf(o, env, tokenizer, chat?.eosIds),
  };
}

/**
 * Constrained decoding, when the options ask for it: the environment's action grammar over the
 * tokenizer's vocabulary, ended by a chat model's end-of-turn tokens (`end`) where it has a template.
 */
function constraintOf(
  o: Pick<TransformerOptions, 'constrainedDecoding'>,
  env: RunEnvironment,
  tokenizer: Tokenizer,
  end: readonly number[] = [],
): { constraint?: TokenConstraint } {
  if (!o.constrainedDecoding) return {};
  const grammar = env.stop?.grammar;
  if (!grammar) {
    throw new ModelLoadError(
      `policyOptions.constrainedDecoding: the environment "${env.name}" declares no action grammar (the calculator does). Fix: set it to false`,
    );
  }
  return { constraint: TokenConstraint.named(grammar, tokenizer, end) };
}

/** Stage 4 for actionMode "score": seed 002's candidate scoring over the environment's fixed action set, on either path's scorer. */
export function candidateScoring<M extends SerialisableModel>(
  o: Pick<TransformerOptions, 'temperature' | 'scoreNormalization'>,
  env: RunEnvironment,
  m: {
    model: M;
    reference: M;
    scorer: CandidateScorer<M>;
    tokenizer: Tokenizer;
    eos: readonly number[];
    optimizer: AdamWOptions;
    computeBase: string;
    computeReason: string;
  },
): CandidateScoringPolicy<M> {
  if (!env.tabular) throw new ModelLoadError(`policyOptions.actionMode "score" needs an environment with a fixed action set; "${env.name}" has none`);
  return new CandidateScoringPolicy<M>({
    model: m.model,
    reference: m.reference,
    scorer: m.scorer,
    tokenizer: m.tokenizer,
    spec: env.tabular(),
    eosId: m.eos[0],
    optimizer: m.optimizer,
    computeBase: m.computeBase,
    computeReason: m.computeReason,
    temperature: o.temperature > 0 ? o.temperature : 1,
    normalization: o.scoreNormalization,
  });
}

/**
 * Stage 5, the warm start (policyOptions.init): the checkpoint's trained weights (adapters under LoRA)
 * into the model, and the KL reference made the warm-started model — the frozen reference is "the
 * initial or warm-started policy" (algorithm.klCoef), so a warm-started run's KL penalty measures its
 * drift from where it started, not from the base model. The optimizer starts afresh (its moments and
 * step come back only with a resume point), and so does the version (0).
 */
export function warmStart<M extends SerialisableModel>(policy: ModelPolicy<M>, init: LoadedCheckpoint | undefined): void {
  if (!init) return;
  restoreCheckpoint(init, policy.model);
  policy.resetReference();
}
