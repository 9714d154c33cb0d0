// The reference agent of a workspace environment: it replays the task file's own demonstration (the
// record's list of action texts, envOptions.demonstrationField), one action per turn. A task without
// one cannot be demonstrated, and says which record to fix.
import { workspaceTaskData } from '../../envs/workspace/taskRecords';
import type { PolicyContext } from '../policy';
import { ScriptedPolicy } from './scriptedPolicy';

export class WorkspaceReferenceAgent extends ScriptedPolicy {
  protected act(ctx: PolicyContext): string {
    const d = workspaceTaskData(ctx.task);
    const demo = d.demonstration;
    if (!demo || demo.length === 0) {
      throw new Error(
        `task ${ctx.task.id} (${d.source ?? 'a task file'}) has no demonstration, and method sft imitates one per training task. Fix: give each training record a "demonstration" list of action texts (envOptions.demonstrationField names the field), or train with grpo from a checkpoint`,
      );
    }
    // past its end (the environment answered differently than when it was recorded), repeat the last action
    return demo[Math.min(ctx.turns.length, demo.length - 1)]!;
  }
}
