// verl's RL parquet, written with hyparquet-writer under an explicit schema, so the columns have the
// types HF datasets gives them in verl's own preprocessing scripts: prompt list<struct<role, content>>,
// reward_model struct<style, ground_truth>, extra_info struct<split, index int64, task_id,
// need_tools_kwargs bool, tools_kwargs struct<T struct<create_kwargs struct<ground_truth>>>>, T the export's
// tool, calculator or code_interpreter (verlTools.ts) (a workspace export: a struct per tool with
// create_kwargs struct<task_id>, and agent_rl_task string).
import type { VerlRow } from './verlTasks';

type SchemaElement = {
  name: string;
  type?: 'BYTE_ARRAY' | 'INT64' | 'BOOLEAN';
  converted_type?: 'UTF8' | 'LIST';
  repetition_type?: 'REQUIRED' | 'OPTIONAL' | 'REPEATED';
  num_children?: number;
};

const str = (name: string): SchemaElement => ({ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' });
const group = (name: string, children: number): SchemaElement => ({ name, repetition_type: 'OPTIONAL', num_children: children });

/**
 * Depth-first schema of the columns, in VerlRow's order: tools_kwargs holds one struct per tool (its
 * create_kwargs' text fields), and a workspace export's extra_info ends with agent_rl_task.
 */
export function verlSchema(tools: readonly [string, readonly string[]][], taskJson: boolean): SchemaElement[] {
  return [
    { name: 'schema', num_children: 6 },
    str('data_source'),
    str('agent_name'),
    { name: 'prompt', repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
    { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
    group('element', 2),
    str('role'),
    str('content'),
    str('ability'),
    group('reward_model', 2),
    str('style'),
    str('ground_truth'),
    // no tools (a workspace with only a reward file): no tools_kwargs column (a Parquet group needs a child)
    group('extra_info', 4 + (tools.length > 0 ? 1 : 0) + (taskJson ? 1 : 0)),
    str('split'),
    { name: 'index', type: 'INT64', repetition_type: 'OPTIONAL' },
    str('task_id'),
    { name: 'need_tools_kwargs', type: 'BOOLEAN', repetition_type: 'OPTIONAL' },
    ...(tools.length > 0 ? [group('tools_kwargs', tools.length)] : []),
    ...tools.flatMap(([name, fields]) => [group(name, 1), group('create_kwargs', fields.length), ...fields.map(str)]),
    ...(taskJson ? [str('agent_rl_task')] : []),
  ];
}

/**
 * The schema of an export with no rows (schemaOf's fallback): one tool, code_interpreter, with the ground
 * truth. Rows carry their own tools (the calculator's `calculator`, a workspace's), read from the first.
 */
export const VERL_SCHEMA: readonly SchemaElement[] = verlSchema([['code_interpreter', ['ground_truth']]], false);

const COLUMNS = ['data_source', 'agent_name', 'prompt', 'ability', 'reward_model', 'extra_info'] as const;

/** The schema of the rows (all of one export have the same tools and fields; the first one says which). */
function schemaOf(rows: readonly VerlRow[]): readonly SchemaElement[] {
  const first = rows[0];
  if (!first) return VERL_SCHEMA;
  const tools = Object.entries(first.extra_info.tools_kwargs).map(([name, k]): [string, string[]] => [name, Object.keys(k.create_kwargs)]);
  return verlSchema(tools, first.extra_info.agent_rl_task !== undefined);
}

/** The parquet file's bytes. hyparquet-writer is an ES module, loaded on first use. */
export async function verlParquet(rows: readonly VerlRow[]): Promise<Uint8Array> {
  const { parquetWriteBuffer } = await import('hyparquet-writer');
  const buffer = parquetWriteBuffer({
    columnData: COLUMNS.map((name) => ({ name, data: rows.map((r) => r[name]) })),
    schema: schemaOf(rows) as never,
    kvMetadata: [{ key: 'created_by', value: 'agent-rl export verl' }],
  });
  return new Uint8Array(buffer);
}
