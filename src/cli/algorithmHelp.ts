// `agent-rl train --help`: the algorithm settings a run of (env, policy, method) will use, with what
// each one trades, so the defaults are visible before anything runs.
import { ALGORITHM_SPECS, algorithmDefaults, methodLabel, type AlgorithmSettings } from '../shared/algorithm';

/** Wraps text at `width` columns, every line after the first indented by `indent`. */
function wrap(text: string, width: number, indent: string): string {
  const words = text.split(/\s+/);
  const lines: string[] = [];
  let line = '';
  for (const w of words) {
    if (line.length > 0 && line.length + 1 + w.length > width) {
      lines.push(line);
      line = w;
    } else line = line.length > 0 ? `${line} ${w}` : w;
  }
  if (line.length > 0) lines.push(line);
  return lines.join(`\n${indent}`);
}

export function algorithmHelp(env: string, policy: string, method: string, given: Partial<AlgorithmSettings> = {}): string {
  const defaults = algorithmDefaults(env, policy, method);
  const resolved = { ...defaults, ...given };
  const indent = ' '.repeat(4);
  const lines = [
    `Algorithm settings for env ${env}, policy ${policy}, method ${method} (${methodLabel(method, resolved)}):`,
    `set them in a --config file as "algorithm": { "name": value }; --lr, --clip, --kl, --epochs, --std, --estimator, --policy-loss and --teacher-weight set eight of them.`,
    '',
  ];
  for (const [name, spec] of Object.entries(ALGORITHM_SPECS)) {
    const value = resolved[name as keyof AlgorithmSettings];
    const mark = name in given ? ' (from your config)' : '';
    lines.push(`  ${name} = ${JSON.stringify(value)}${mark}`);
    lines.push(`${indent}${wrap(spec.description, 96, indent)}`);
    lines.push(`${indent}${wrap(`Trades: ${spec.trade}.`, 96, indent)}`);
  }
  return lines.join('\n');
}
