// One option of a Start Run wizard step's quick pick (startRunSteps.ts, judgeSteps.ts,
// reasoningGymSteps.ts): its own module so that those step modules share it without importing one
// another in a circle.

/** An option: the value the step returns, and what the quick pick shows. */
export interface Choice<T> {
  readonly value: T;
  readonly label: string;
  readonly description: string;
}
