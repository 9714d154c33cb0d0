// The tasks of an environment whose tasks are the user's files: the workspace environment
// (workspaceEnv.ts) and an agent program's (rl/envs/agent) both load them here, from the same options
// (envOptions.tasks, taskPreset, the *Field renames, heldOutFraction, splitSeed): the files read by
// taskFiles.ts, the records made tasks and split by taskRecords.ts. Also the task as a reward reads it,
// which both environments hand to a reward file.
import type { Task, TaskSource } from '../environment';
import { readTaskRecords } from './taskFiles';
import { FIELD_NAMES, tasksOf, workspaceTaskData, type FieldMap, type TaskPreset } from './taskRecords';
import type { RewardTask } from './workspaceReward';

/**
 * The task options of an environment's envOptions. An environment offers the field renames it has
 * (the agent environment fewer than the workspace's); '' or absent keeps the preset's field.
 */
export type TaskSourceOptions = {
  /** The task files: a path or a glob, relative to the environment's root folder. */
  readonly tasks: string;
  readonly taskPreset: TaskPreset;
  readonly heldOutFraction: number;
  readonly splitSeed: number;
} & { readonly [F in keyof FieldMap as `${F}Field`]?: string };

/** The record fields the options rename (idField → id, ...), the unset ones left out. */
export function taskFieldsOf(o: TaskSourceOptions): Partial<Record<keyof FieldMap, string>> {
  const fields: Partial<Record<keyof FieldMap, string>> = {};
  for (const f of FIELD_NAMES) {
    const v = o[`${f}Field`];
    if (v !== undefined && v !== '') fields[f] = v;
  }
  return fields;
}

/**
 * Reads the task files under `root` and splits their tasks into training and held-out ones. Throws the
 * environment's own error (`refuse`) when no file is named, and a TaskFileError naming the file, the
 * line or row and the field for a record it cannot read.
 */
export async function loadTaskSource(root: string, o: TaskSourceOptions, refuse: (message: string) => Error): Promise<TaskSource> {
  if (o.tasks === '') throw refuse('envOptions.tasks is empty. Fix: name the task file(s), e.g. "tasks.jsonl" or "data/*.parquet"');
  const records = await readTaskRecords(root, [o.tasks]);
  return tasksOf(records, { preset: o.taskPreset, fields: taskFieldsOf(o), heldOutFraction: o.heldOutFraction, splitSeed: o.splitSeed });
}

/** A task as a reward file reads it (its `task` argument): snake_case, the tests and the ground truth from the record. */
export function rewardTask(t: Task): RewardTask {
  const d = workspaceTaskData(t);
  return { id: t.id, prompt: t.prompt, ground_truth: d.groundTruth ?? null, public_tests: d.publicTests, private_tests: d.privateTests, metadata: d.metadata };
}
