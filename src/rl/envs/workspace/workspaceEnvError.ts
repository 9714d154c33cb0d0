// The error of a workspace environment that cannot open (its tasks, tool file or reward), naming the
// file and the fix. Its own module because the reward pool (rewardPool.ts), which the agent environment
// opens too, throws it without importing the workspace environment; the CLI exits 2 on it.
export class WorkspaceEnvError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkspaceEnvError';
  }
}
