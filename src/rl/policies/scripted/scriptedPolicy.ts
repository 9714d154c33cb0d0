// The shape every scripted agent shares: it writes one action text per context and cannot be trained.
// Its samples carry log-prob 0 and version 0 (they are demonstrations, not samples of a model).
import type { Trajectory } from '../../../shared/types';
import type { Rng } from '../../random';
import type { Policy, PolicyContext, PolicySample, UpdateStats } from '../policy';

export abstract class ScriptedPolicy implements Policy {
  readonly version = 0;
  readonly compute = 'scripted reference agent';

  /** The action text for one context. */
  protected abstract act(ctx: PolicyContext, rng: Rng): string;

  sample(contexts: readonly PolicyContext[], rng: Rng): Promise<PolicySample[]> {
    return Promise.resolve(contexts.map((ctx) => ({ text: this.act(ctx, rng), step: { behaviourLogprob: 0, policyVersion: 0 } })));
  }

  update(_t: readonly Trajectory[]): UpdateStats {
    throw new Error('the reference agent is scripted and cannot be trained');
  }
}
