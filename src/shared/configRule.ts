// The form of a run-config rule (configRules.ts lists them in order; distillRules.ts holds the
// distillation teacher's) and the small helpers the rules share, apart so that both lists import them
// without importing each other.
import type { ConfigIssue } from './fieldSpec';
import type { ConfigDraft } from './runSettings';

/** What the config wrote in the sections whose rules ask "was it given?", not "what did it resolve to?" (plain records: {} when absent). */
export interface WrittenConfig {
  readonly algorithm: Readonly<Record<string, unknown>>;
  readonly demonstrations: Readonly<Record<string, unknown>>;
}

export interface ConfigRule {
  /** A stable name (tests and docs refer to it). */
  readonly id: string;
  /** What the rule requires, in a sentence. */
  readonly description: string;
  /** The problems this rule finds in a config whose fields are each in range ([] = none). */
  check(config: ConfigDraft, written: WrittenConfig): ConfigIssue[];
}

export const issue = (field: string, value: unknown, message: string, fix: string): ConfigIssue[] => [{ field, value, message, fix }];
export const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v !== '';
/** The methods trained by a policy gradient on advantages (the rest by negative log-likelihood). */
export const policyGradient = (method: string): boolean => method === 'grpo' || method === 'distill';
