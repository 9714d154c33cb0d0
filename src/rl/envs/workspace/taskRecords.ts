// Records of a task file → tasks. Which field holds what is configurable (envOptions.fields, dotted
// paths into nested records), with presets for the layouts users already have: verl's RL parquet,
// Hugging Face's GSM8K, MBPP and HumanEval. The held-out split comes from a field or from a seeded
// fraction. Every error names the file, the line or row, the field and the fix, before anything runs.
import { isObject as isRecord } from '../../../shared/protocol/guards';
import { fnv1a } from '../../random';
import type { Task } from '../environment';
import type { SourceRecord } from './taskFiles';
import { TaskFileError } from './taskFiles';

export const TASK_PRESETS = ['default', 'verl', 'gsm8k', 'mbpp', 'humaneval'] as const;
export type TaskPreset = (typeof TASK_PRESETS)[number];

/** Where each part of a task is in a record (dotted paths). Only `prompt` is required. */
export interface FieldMap {
  readonly id?: string;
  readonly prompt: string;
  readonly groundTruth?: string;
  /** Python tests (assert statements or a program), all private unless public ones are named. */
  readonly tests?: string;
  readonly publicTests?: string;
  readonly privateTests?: string;
  readonly split?: string;
  /** The reference agent's actions for a supervised warm start (an array of action texts). */
  readonly demonstration?: string;
  readonly metadata?: string;
  /** HumanEval: the function the tests' check(candidate) is called with. */
  readonly entryPoint?: string;
}

export const FIELD_NAMES: readonly (keyof FieldMap)[] = [
  'id',
  'prompt',
  'groundTruth',
  'tests',
  'publicTests',
  'privateTests',
  'split',
  'demonstration',
  'metadata',
  'entryPoint',
];

export const PRESET_FIELDS: Readonly<Record<TaskPreset, FieldMap>> = {
  default: {
    id: 'id',
    prompt: 'prompt',
    groundTruth: 'answer',
    tests: 'tests',
    publicTests: 'public_tests',
    privateTests: 'private_tests',
    split: 'split',
    demonstration: 'demonstration',
    metadata: 'metadata',
  },
  // verl's RL parquet (its examples/data_preprocess scripts): chat-message prompt, ground truth under
  // reward_model; extra_info.index restarts at 0 in each file, so ids are the file's (file#n) unless idField names one
  verl: {
    prompt: 'prompt',
    groundTruth: 'reward_model.ground_truth',
    split: 'extra_info.split',
    demonstration: 'extra_info.demonstration',
    metadata: 'extra_info',
  },
  // openai/gsm8k: question, and an answer whose last line is "#### 42"
  gsm8k: { prompt: 'question', groundTruth: 'answer', split: 'split' },
  // mbpp: text, code, test_list (assert statements), task_id
  mbpp: { id: 'task_id', prompt: 'text', tests: 'test_list', split: 'split' },
  // openai_humaneval: prompt (signature and docstring), test (def check(candidate)), entry_point
  humaneval: { id: 'task_id', prompt: 'prompt', tests: 'test', entryPoint: 'entry_point', split: 'split' },
};

/** What a task from a file carries for the environment, the reward and the reference agent. */
/** The record behind each workspace Task object (read back typed, not from its data record). */
const recordOf = new WeakMap<Task, WorkspaceTaskData>();

/** The record a workspace task was made from; an error for any other task. */
export function workspaceTaskData(task: Task): WorkspaceTaskData {
  const d = recordOf.get(task);
  if (!d) throw new Error(`task ${task.id} is not a workspace task`);
  return d;
}

export type WorkspaceTaskData = {
  readonly source: string;
  readonly messages?: readonly { readonly role: string; readonly content: string }[];
  readonly groundTruth?: unknown;
  readonly publicTests: readonly string[];
  readonly privateTests: readonly string[];
  readonly demonstration?: readonly string[];
  readonly metadata: Readonly<Record<string, unknown>>;
};

export interface TaskSplitOptions {
  readonly preset: TaskPreset;
  /** The user's field names over the preset's. */
  readonly fields: Readonly<Partial<FieldMap>>;
  /** Share of tasks held out when no split field is present, chosen by a hash of the id and the seed. */
  readonly heldOutFraction: number;
  readonly splitSeed: number;
}

/** A record's value as text: scalars as themselves, anything else as JSON. */
export function scalarText(v: unknown): string {
  return typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean' ? String(v) : (JSON.stringify(v) ?? '');
}

/** A dotted path into a record ("reward_model.ground_truth"); undefined when any step is missing. */
export function pick(record: Readonly<Record<string, unknown>>, dotted: string): unknown {
  let v: unknown = record;
  for (const key of dotted.split('.')) {
    if (!isRecord(v)) return undefined;
    v = v[key];
  }
  return v;
}

function fail(r: SourceRecord, field: string, message: string, fix: string): never {
  throw new TaskFileError(`${r.file} ${r.where}: ${[field, message].filter((x) => x !== '').join(' ')}. Fix: ${fix}`);
}

function messagesOf(r: SourceRecord, field: string, v: readonly unknown[]): { role: string; content: string }[] {
  return v.map((m, i) => {
    if (!isRecord(m) || typeof m.role !== 'string' || typeof m.content !== 'string') {
      return fail(r, `"${field}"[${i}]`, 'is not a chat message', 'write each message as {"role": "user", "content": "..."}');
    }
    return { role: m.role, content: m.content };
  });
}

/** The prompt a policy without a chat template reads: the system and user messages, in order. */
export function renderMessages(messages: readonly { role: string; content: string }[]): string {
  return messages
    .filter((m) => m.role === 'system' || m.role === 'user')
    .map((m) => m.content)
    .join('\n');
}

function testsOf(r: SourceRecord, field: string, v: unknown, entryPoint: string | undefined): string[] {
  if (v === undefined || v === null || v === '') return [];
  if (typeof v === 'string') return [entryPoint ? `${v}\ncheck(${entryPoint})` : v];
  if (Array.isArray(v) && v.every((t) => typeof t === 'string')) return v;
  return fail(
    r,
    `"${field}"`,
    `holds ${Array.isArray(v) ? 'an array with non-text items' : typeof v}`,
    'give tests as Python text or an array of texts (assert statements)',
  );
}

const TRAIN = new Set(['train', 'training']);
const HELD_OUT = new Set(['test', 'validation', 'valid', 'val', 'heldout', 'held_out', 'held-out', 'eval', 'dev']);

/** A split named by the file (train.parquet, test-00000-of-00001.parquet, validation.jsonl), as Hugging Face datasets lay them out. */
export function splitOfFileName(file: string): 'train' | 'heldOut' | undefined {
  const name = file.split(/[\\/]/).pop()!.toLowerCase();
  if (/(^|[-_.])(train|training)([-_.]|$)/.test(name)) return 'train';
  if (/(^|[-_.])(test|validation|valid|val|eval|dev|heldout|held_out)([-_.]|$)/.test(name)) return 'heldOut';
  return undefined;
}

/** FNV-1a of text with murmur3's final mix (similar ids land far apart) → [0, 1). */
export function unitHash(text: string): number {
  let h = fnv1a(text);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return ((h ^ (h >>> 16)) >>> 0) / 2 ** 32;
}

/** The field map a run uses: the preset's, with the user's names over it. */
export function fieldMap(o: TaskSplitOptions): { map: FieldMap; given: ReadonlySet<string> } {
  return { map: { ...PRESET_FIELDS[o.preset], ...o.fields }, given: new Set(Object.keys(o.fields)) };
}

/** Tasks of the records, split into train and held-out; throws TaskFileError naming the record. */
export function tasksOf(records: readonly SourceRecord[], o: TaskSplitOptions): { train: Task[]; heldOut: Task[] } {
  const { map, given } = fieldMap(o);
  const seen = new Map<string, SourceRecord>();
  const train: Task[] = [];
  const heldOut: Task[] = [];
  const fileIndex = new Map<string, number>();
  for (const r of records) {
    const get = (key: keyof FieldMap): unknown => {
      const name = map[key];
      if (name === undefined) return undefined;
      const v = pick(r.value, name);
      if (v === undefined && given.has(key))
        fail(r, `has no field "${name}" (envOptions.${key}Field)`, '', `add it to every record, or set envOptions.${key}Field to the field that holds it`);
      return v;
    };
    const n = (fileIndex.get(r.file) ?? 0) + 1;
    fileIndex.set(r.file, n);
    const rawPrompt = get('prompt');
    let prompt: string;
    let messages: { role: string; content: string }[] | undefined;
    if (typeof rawPrompt === 'string') prompt = rawPrompt;
    else if (Array.isArray(rawPrompt)) {
      messages = messagesOf(r, map.prompt, rawPrompt);
      prompt = renderMessages(messages);
    } else if (rawPrompt === undefined) {
      return fail(
        r,
        `has no prompt field "${map.prompt}"`,
        '',
        `name the field that holds the prompt in envOptions.promptField (the ${o.preset} preset reads "${map.prompt}"), or choose another envOptions.taskPreset`,
      );
    } else
      return fail(
        r,
        `"${map.prompt}"`,
        `is ${typeof rawPrompt}, not text or chat messages`,
        'write the prompt as text or as [{"role": "user", "content": "..."}]',
      );
    if (prompt.trim() === '') fail(r, `"${map.prompt}"`, 'is empty', 'give every task a prompt');
    const rawId = get('id');
    const id = rawId === undefined || rawId === null || rawId === '' ? `${r.file}#${n}` : scalarText(rawId);
    const twin = seen.get(id);
    if (twin)
      fail(
        r,
        `id "${id}"`,
        `repeats the id of ${twin.file} ${twin.where}`,
        `give every task its own id (envOptions.idField names the field: "${map.id ?? '(none)'}")`,
      );
    seen.set(id, r);
    let groundTruth = get('groundTruth');
    if (o.preset === 'gsm8k' && typeof groundTruth === 'string') groundTruth = (groundTruth.split('####').pop() ?? '').trim().replace(/,/g, '');
    const entryPoint = get('entryPoint');
    const tests = testsOf(r, map.tests ?? 'tests', get('tests'), typeof entryPoint === 'string' ? entryPoint : undefined);
    const publicTests = testsOf(r, map.publicTests ?? 'public_tests', get('publicTests'), undefined);
    const privateTests = [...tests, ...testsOf(r, map.privateTests ?? 'private_tests', get('privateTests'), undefined)];
    const demo = get('demonstration');
    if (demo !== undefined && demo !== null && !(Array.isArray(demo) && demo.every((a) => typeof a === 'string'))) {
      fail(r, `"${map.demonstration}"`, 'is not an array of action texts', 'write the reference actions as ["<call>...</call>", "<answer>...</answer>"]');
    }
    const meta = get('metadata');
    const metadata: Record<string, unknown> = isRecord(meta) ? { ...meta } : meta === undefined ? {} : { value: meta };
    if (o.preset === 'verl') for (const k of ['data_source', 'ability']) if (r.value[k] !== undefined) metadata[k] = r.value[k];
    if (o.preset === 'mbpp' && typeof r.value.code === 'string') metadata.reference = r.value.code;
    if (o.preset === 'humaneval' && typeof r.value.canonical_solution === 'string') metadata.reference = `${prompt}${r.value.canonical_solution}`;
    const data: WorkspaceTaskData = {
      source: `${r.file} ${r.where}`,
      ...(messages ? { messages } : {}),
      ...(groundTruth !== undefined && groundTruth !== null ? { groundTruth } : {}),
      publicTests,
      privateTests,
      ...(Array.isArray(demo) ? { demonstration: demo } : {}),
      metadata,
    };
    const task: Task = { id, prompt, data };
    recordOf.set(task, data);
    const split = get('split');
    let heldOutTask: boolean;
    const byName = splitOfFileName(r.file);
    if ((split === undefined || split === null || split === '') && byName !== undefined) heldOutTask = byName === 'heldOut';
    else if (split === undefined || split === null || split === '') heldOutTask = unitHash(`${o.splitSeed}:${id}`) < o.heldOutFraction;
    else {
      const s = scalarText(split).toLowerCase();
      if (TRAIN.has(s)) heldOutTask = false;
      else if (HELD_OUT.has(s)) heldOutTask = true;
      else
        return fail(
          r,
          `"${map.split}" = ${JSON.stringify(split)}`,
          'is not a split this knows',
          'use "train" for training tasks and "test" (or validation, heldout, eval, dev) for held-out ones',
        );
    }
    (heldOutTask ? heldOut : train).push(task);
  }
  if (train.length === 0)
    throw new TaskFileError(
      `envOptions.tasks: no training task (${records.length} record(s), all held out). Fix: mark some records "train" in the split field, or lower envOptions.heldOutFraction`,
    );
  if (heldOut.length === 0) {
    throw new TaskFileError(
      `envOptions.tasks: no held-out task among ${records.length} record(s), so nothing can be evaluated. Fix: add the held-out file (e.g. "{train,test}.parquet"), mark some records "test" in the split field "${map.split ?? 'split'}", or, for records without one, raise envOptions.heldOutFraction (now ${o.heldOutFraction})`,
    );
  }
  return { train, heldOut };
}
