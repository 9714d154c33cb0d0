// The sessions that score episodes with a Python reward file, opened by both the workspace environment
// (envOptions.reward a .py file) and an agent program's (rl/envs/agent, envOptions.reward likewise):
// the file is imported once in the sandbox to check that it loads and defines reward(task, trajectory),
// then a pool of sessions imports it and scores episode after episode (workspaceReward.ts, pythonReward).
import { WorkspaceEnvError } from './workspaceEnvError';
import { SessionPool, ToolLoadError, ToolSession, type SessionSandbox, type ToolFile } from './toolSession';

/**
 * Imports a reward file once in the sandbox to check that it loads and defines reward(task,
 * trajectory), then the pool of sessions that score episodes with it (throws an error naming the fix).
 */
export async function openRewardPool(sandbox: SessionSandbox, rewardFile: ToolFile, poolSize: number): Promise<SessionPool> {
  const probe = new ToolSession({ ...sandbox, role: 'reward' }, rewardFile, true);
  try {
    const listed = await probe.start();
    if (!listed.tools.some((t) => t.name === 'reward'))
      throw new WorkspaceEnvError(
        `${rewardFile.name} defines no function reward(task, trajectory). Fix: define def reward(task, trajectory): returning a number or {"score": number, ...extras}`,
      );
  } catch (e) {
    if (e instanceof ToolLoadError) throw new WorkspaceEnvError(e.message.replace('the tool file does not import', 'the reward file does not import'));
    throw e;
  } finally {
    probe.close();
  }
  return new SessionPool({ ...sandbox, role: 'reward' }, rewardFile, poolSize);
}
