// `agent-rl export verl`: everything a verl run of a run config needs, in one folder:
//   train.parquet, test.parquet   the task set as verl's RL dataset (train and held-out splits)
//   agent_rl_tools.yaml, .py      verl's tool config and the workbench's own tool classes (verlTools.ts): the
//                                 calculator's op(a, b), or code run in `agent-rl sandbox serve`
//   agent_rl_reward.py            the reward (reward.custom_reward_function), scoring in the same sandbox, with
//   agent_rl_reward.json          its settings (sandbox URL, format weight, data sources) and
//   agent_rl_verifier.py          the verifier program it sends to the sandbox
//   main_ppo.sh, ray_job.sh       the command line with the run's settings as verl keys, and its Ray Jobs form
// A workspace environment with a tool file or a reward file writes its own tool class, tool config and
// reward instead of agent_rl_tools.* and agent_rl_reward.* (verlWorkspace.ts).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RunConfig } from '../../shared/runConfig';
import { oneLine } from '../../shared/untrustedText';
import { mainPpoCommand, rayJobCommand, shellQuote, VERL_VERSION, verlOverrides, type VerlLaunch, type VerlPaths } from './verlCommandLine';
import { verlParquet } from './verlParquet';
import { REWARD_FILE, verlRewardFiles } from './verlReward';
import { openEnvironment } from '../../rl/envs/registry';
import { checkVerlExportable, verlTaskSet, type VerlTaskSet } from './verlTasks';
import { BUILTIN_TOOL_CONFIG, builtinTools, type BuiltinTools } from './verlTools';
import { exportWorkspace, isWorkspaceWithFiles, WORKSPACE_REWARD_FILE, WORKSPACE_TOOL_CONFIG, type WorkspaceExport } from './verlWorkspace';

/** The scripts' note of the verl release their keys are written for, and what differs for older ones. */
const VERSION_NOTE =
  `# The keys are verl ${VERL_VERSION}'s. With verl <= 0.8, rename reward.custom_reward_function.* to the top-level\n` +
  `# custom_reward_function.* (0.9.1 reads only the former); the *micro_batch_size_per_gpu keys are accepted there too.\n`;

/** `agent-rl sandbox serve`'s default --max-timeout (s): it cuts a longer run_timeout to this, silently. */
const SERVE_MAX_TIMEOUT_S = 60;

/**
 * The command that starts the sandbox, with --max-timeout raised where the export's tools ask for more
 * than the server's default (a long timeoutMs, a workspace episode's replay), so a run is not cut short.
 */
export function serveCommand(sandboxSeconds: number | undefined): string {
  const seconds = Math.ceil(sandboxSeconds ?? 0);
  return `agent-rl sandbox serve --port 8080${seconds > SERVE_MAX_TIMEOUT_S ? ` --max-timeout ${seconds}` : ''}`;
}

export interface VerlExportOptions {
  readonly outDir: string;
  /** The /run_code URL verl's tool and reward call (with ?token=T when the server needs one). */
  readonly sandboxUrl: string;
  readonly model: string;
  readonly rollout: string;
  readonly gpusPerNode: number;
  readonly nodes: number;
  /** Where the Ray job writes its generation dumps: a path on storage the cluster's nodes share. */
  readonly dumpDir?: string;
}

export interface VerlExportResult {
  readonly files: string[];
  readonly trainRows: number;
  readonly testRows: number;
  readonly mainPpo: string;
  readonly rayJob: string;
}

export async function exportVerl(config: RunConfig, o: VerlExportOptions): Promise<VerlExportResult> {
  // refused before any file is read or written
  checkVerlExportable(config);
  let set: VerlTaskSet;
  let workspace: WorkspaceExport | undefined;
  let tools: BuiltinTools | undefined;
  if (isWorkspaceWithFiles(config)) {
    workspace = await exportWorkspace(config, o.sandboxUrl);
    set = workspace.set;
  } else {
    const env = await openEnvironment(config);
    try {
      set = verlTaskSet(config, env);
    } finally {
      await env.dispose();
    }
    tools = builtinTools(config, o.sandboxUrl);
  }
  const out = path.resolve(o.outDir);
  const dumps = path.resolve(o.dumpDir ?? path.join(out, 'dumps'));
  const file = (name: string): string => path.join(out, name);
  const toolConfigName = workspace ? WORKSPACE_TOOL_CONFIG : BUILTIN_TOOL_CONFIG;
  const rewardName = workspace ? WORKSPACE_REWARD_FILE : REWARD_FILE;
  const local: VerlPaths = {
    trainFile: file('train.parquet'),
    valFile: file('test.parquet'),
    toolConfig: file(toolConfigName),
    rewardFile: file(rewardName),
    rolloutDir: path.join(dumps, 'rollout'),
    validationDir: path.join(dumps, 'validation'),
  };
  // the observations verl must pass whole (its default cut is 256 characters)
  const toolResponseChars = workspace?.toolResponseChars ?? tools?.toolResponseChars;
  const launch: VerlLaunch = {
    model: o.model,
    rollout: o.rollout,
    gpusPerNode: o.gpusPerNode,
    nodes: o.nodes,
    trainRows: set.train.length,
    toolCalls: set.toolCalls,
    ...(toolResponseChars !== undefined ? { toolResponseChars } : {}),
  };
  const overrides = verlOverrides(config, local, launch);
  // In a Ray job the folder is the working directory: the job reads its inputs by relative path.
  const relative: VerlPaths = { ...local, trainFile: 'train.parquet', valFile: 'test.parquet', toolConfig: toolConfigName, rewardFile: rewardName };
  const mainPpo = mainPpoCommand(overrides);
  const rayJob = rayJobCommand(verlOverrides(config, relative, launch), out);
  fs.mkdirSync(out, { recursive: true });
  // verl's tool registry imports the tool class by module name: the folder goes on the workers' path
  // (a Ray job's working_dir is on it already). An exported variable reaches only the Ray workers this
  // shell's ray.init starts: the comment says what a cluster started with `ray start` needs.
  const pythonPath =
    `# PYTHONPATH reaches the Ray workers this script starts. On a cluster started with \`ray start\`, use ray_job.sh, or export it\n` +
    `# on every node before \`ray start\` (this folder at the same path on each, as the data paths below need too).\n` +
    `export PYTHONPATH=${shellQuote(out)}\${PYTHONPATH:+:$PYTHONPATH}\n`;
  const serve = serveCommand(workspace?.sandboxSeconds ?? tools?.sandboxSeconds);
  const formatWeight = config.env === 'calculator' ? config.envOptions.formatWeight : 0;
  const writes: [string, string | Uint8Array][] = [
    ['train.parquet', await verlParquet(set.train)],
    ['test.parquet', await verlParquet(set.heldOut)],
    ...(workspace ? workspace.files : [...(tools?.files ?? []), ...verlRewardFiles(o.sandboxUrl, formatWeight)]),
    // the name in a comment is one line with its invisible characters marked (oneLine): a line break in it
    // would end the comment and make the rest of the name a command of the script
    [
      'main_ppo.sh',
      `#!/bin/sh\n# ${oneLine(config.name || config.env, 200)}: verl GRPO on one machine or inside an allocated node. Start the sandbox first:\n#   ${serve}\n${VERSION_NOTE}set -e\n${pythonPath}${mainPpo}\n`,
    ],
    [
      'ray_job.sh',
      `#!/bin/sh\n# The same run as a Ray job. The sandbox URL in ${workspace ? 'agent_rl_workspace.json' : `${BUILTIN_TOOL_CONFIG} and agent_rl_reward.json`} must be reachable from the workers;\n# start it as ${serve}\n${VERSION_NOTE}set -e\n${rayJob}\n`,
    ],
  ];
  for (const [name, content] of writes) {
    fs.mkdirSync(path.dirname(file(name)), { recursive: true });
    fs.writeFileSync(file(name), content, name.endsWith('.sh') ? { mode: 0o755 } : {});
  }
  return { files: writes.map(([name]) => file(name)), trainRows: set.train.length, testRows: set.heldOut.length, mainPpo, rayJob };
}
