// Demonstrations for supervised warm starts: a scripted reference agent acts, and each turn's text is
// tokenized once, as it enters the context (observation: loss mask 0; action: loss mask 1, or 0 for a
// deliberate mistake, which the student reads but does not imitate), the token layout of a sample —
// through the model's chat template when it has one, as the policy's own samples are (the first
// observation as the template's system and user messages, each later one as the template's glue), and
// closed by the end-of-turn token where the policy's actions end with it (constrained decoding).
import type { DemonstrationChoice } from '../../../shared/runConfig';
import type { Rng } from '../../random';
import type { Policy, PolicyContext, PolicySample } from '../policy';
import type { Tokenizer } from '../lm/tokenizer';
import type { ChatFormat } from '../lm/chatFormat';
import { CalculatorReferenceAgent } from './calculatorReference';
import { CodeReferenceAgent } from './codeReference';
import { WorkspaceReferenceAgent } from './workspaceReference';

/** The scripted reference agent of an environment with the run's `demonstrations` settings, if it has one. */
export function referenceAgentFor(c: DemonstrationChoice): Policy | undefined {
  switch (c.env) {
    case 'calculator':
      return new CalculatorReferenceAgent(c.demonstrations);
    case 'code':
      return new CodeReferenceAgent(c.demonstrations.mistakeRate);
    case 'workspace':
    case 'agent':
      // an agent program's tasks are task-file records too: each demonstration answers one request
      return new WorkspaceReferenceAgent();
    case 'binary-search':
    case 'verifiers':
    case 'openenv':
      return undefined;
  }
}

export class DemonstrationPolicy implements Policy {
  readonly version = 0;
  readonly compute = 'scripted demonstrations';
  constructor(
    private readonly agent: Policy,
    private readonly tokenizer: Tokenizer,
    /** The policy's chat format, and the end-of-turn id its actions end with (constrained decoding), if any. */
    private readonly chat?: { readonly format: ChatFormat; readonly end?: number },
  ) {}

  /** The ids the observation adds to the context, as the policy's own sampling encodes them. */
  private contextIds(ctx: PolicyContext): number[] {
    const chat = this.chat?.format;
    if (!chat) return this.tokenizer.encode(ctx.observation.text);
    const last = ctx.turns[ctx.turns.length - 1]?.policy.tokens?.sampled;
    // an agent program's request: its conversation through the template, continued or afresh
    const request = ctx.observation.request;
    if (request) return chat.request(request, last ?? []);
    return last ? chat.next(ctx.observation, last) : chat.first(ctx.observation);
  }

  async sample(contexts: readonly PolicyContext[], rng: Rng): Promise<PolicySample[]> {
    const out = await this.agent.sample(contexts, rng);
    return out.map((s, i) => {
      const ctx = contexts[i]!;
      const request = ctx.observation.request;
      // an answer to an agent program's request is a whole assistant message: it ends with the
      // end-of-turn token, as the policy's own answers do (the student learns where to stop)
      const end = this.chat?.end ?? (request && this.chat ? this.chat.format.eosIds[0] : undefined);
      const sampled = [...this.tokenizer.encode(s.text), ...(end !== undefined ? [end] : [])];
      // a request that starts a new segment (the program rewrote its history) is a sequence of its own
      const segment = request !== undefined && request.continuesFrom === 0 && ctx.turns.length > 0;
      return {
        text: s.text,
        ...(request ? { finish: 'stop' as const, decode: (ids: readonly number[]) => this.tokenizer.decode([...ids]) } : {}),
        step: {
          ...s.step,
          tokens: {
            context: this.contextIds(ctx),
            sampled,
            logprobs: sampled.map(() => 0),
            ...(s.mistake ? { imitate: false } : {}),
            ...(segment ? { segment: true } : {}),
          },
        },
      };
    });
  }
}
