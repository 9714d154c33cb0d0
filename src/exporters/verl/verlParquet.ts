// verl's RL parquet, written with hyparquet-writer under an explicit schema, so the columns have the
// types HF datasets gives them in verl's own preprocessing scripts: prompt list<struct<role, content>>,
// reward_model struct<style, ground_truth>, extra_info struct<split, index int64, task_id,
// need_tools_kwargs bool, tools_kwargs struct<code_interpreter struct<create_kwargs struct<ground_truth>>>>.
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

/** Depth-first schema of the columns, in VerlRow's order. */
export const VERL_SCHEMA: readonly SchemaElement[] = [
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
  group('extra_info', 5),
  str('split'),
  { name: 'index', type: 'INT64', repetition_type: 'OPTIONAL' },
  str('task_id'),
  { name: 'need_tools_kwargs', type: 'BOOLEAN', repetition_type: 'OPTIONAL' },
  group('tools_kwargs', 1),
  group('code_interpreter', 1),
  group('create_kwargs', 1),
  str('ground_truth'),
];

const COLUMNS = ['data_source', 'agent_name', 'prompt', 'ability', 'reward_model', 'extra_info'] as const;

/** The parquet file's bytes. hyparquet-writer is an ES module, loaded on first use. */
export async function verlParquet(rows: readonly VerlRow[]): Promise<Uint8Array> {
  const { parquetWriteBuffer } = await import('hyparquet-writer');
  const buffer = parquetWriteBuffer({
    columnData: COLUMNS.map((name) => ({ name, data: rows.map((r) => r[name]) })),
    schema: VERL_SCHEMA as never,
    kvMetadata: [{ key: 'created_by', value: 'agent-rl export verl' }],
  });
  return new Uint8Array(buffer);
}
