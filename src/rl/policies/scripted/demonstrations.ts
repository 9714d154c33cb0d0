// Demonstrations for supervised warm starts: a scripted reference agent acts, and each turn's text is
// tokenized once, as it enters the context (observation: loss mask 0; action: loss mask 1, or 0 for a
// deliberate mistake, which the student reads but does not imitate), the token layout of a sample.
import type { DemonstrationChoice } from '../../../shared/runConfig';
import type { Rng } from '../../random';
import type { Policy, PolicyContext, PolicySample } from '../policy';
import type { Tokenizer } from '../transformer/tokenizer';
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
      return new WorkspaceReferenceAgent();
    case 'binary-search':
      return undefined;
  }
}

export class DemonstrationPolicy implements Policy {
  readonly version = 0;
  readonly compute = 'scripted demonstrations';
  constructor(
    private readonly agent: Policy,
    private readonly tokenizer: Tokenizer,
  ) {}

  async sample(contexts: readonly PolicyContext[], rng: Rng): Promise<PolicySample[]> {
    const out = await this.agent.sample(contexts, rng);
    return out.map((s, i) => {
      const sampled = this.tokenizer.encode(s.text);
      return {
        text: s.text,
        step: {
          ...s.step,
          tokens: {
            context: this.tokenizer.encode(contexts[i]!.observation.text),
            sampled,
            logprobs: sampled.map(() => 0),
            ...(s.mistake ? { imitate: false } : {}),
          },
        },
      };
    });
  }
}
