// The shape every scripted agent shares: it writes one action text per context and cannot be trained.
// Its samples carry log-prob 0 and version 0 (they are demonstrations, not samples of a model).
import type { Rng } from '../../random';
import type { Policy, PolicyContext, PolicySample } from '../policy';

export abstract class ScriptedPolicy implements Policy {
  readonly version = 0;
  readonly compute = 'scripted reference agent';

  /** The action text for one context; `mistake` marks a deliberate error (shown, not to be imitated). */
  protected abstract act(ctx: PolicyContext, rng: Rng): string | { readonly text: string; readonly mistake: true };

  sample(contexts: readonly PolicyContext[], rng: Rng): Promise<PolicySample[]> {
    return Promise.resolve(
      contexts.map((ctx) => {
        const a = this.act(ctx, ctx.rng ?? rng);
        return typeof a === 'string'
          ? { text: a, step: { behaviourLogprob: 0, policyVersion: 0 } }
          : { text: a.text, step: { behaviourLogprob: 0, policyVersion: 0 }, mistake: true };
      }),
    );
  }
}
