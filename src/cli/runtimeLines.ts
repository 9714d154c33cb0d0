// The runtime section of `agent-rl show`: what the run ran on, from its stored runtime record
// (runs.runtime_json). Stored text is untrusted (a shared or imported database): every stored string
// goes through cell() (oneLine: invisibles marked, one line, cut); the base weights are read only as one
// of their three names (shared/baseWeights.ts) and printed in the workbench's own words.
import { baseWeightsLine, storedBaseWeights } from '../shared/baseWeights';
import type { RuntimeInfo } from '../shared/types';
import { cell } from './format';

/** "  runtime: …", then the compute path, the base weights and the teacher where the record has them. */
export function runtimeLines(runtime: RuntimeInfo): string[] {
  const base = storedBaseWeights(runtime);
  return [
    `  runtime: ${cell(runtime.workbench)} on Node ${cell(runtime.node)}, ${cell(runtime.compute, 200)}, SQLite ${cell(runtime.sqlite ?? '?')}`,
    ...(typeof runtime.computeReason === 'string' ? [`  compute path: ${cell(runtime.computeReason, 400)}`] : []),
    ...(base ? [`  ${baseWeightsLine(base)}`] : []),
    ...(typeof runtime.teacher === 'string' ? [`  teacher: ${cell(runtime.teacher, 400)}`] : []),
  ];
}
