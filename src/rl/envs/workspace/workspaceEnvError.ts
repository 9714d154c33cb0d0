// The error of a workspace environment that cannot open (its tasks, tool file or reward), naming the
// file and the fix. Its own module because the reward pool (rewardPool.ts), which the agent environment
// opens too, throws it without importing the workspace environment; the CLI exits 2 on it.
export class WorkspaceEnvError extends Error {
  readonly exitCode = 2; // bad input, not a failure while running: agent-rl exits 2 (src/cli/exitCodes.ts)
  constructor(message: string) {
    super(message);
    this.name = 'WorkspaceEnvError';
  }
}
