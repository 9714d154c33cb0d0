#!/usr/bin/env node
// @ts-check
// Turns the Python the workbench runs or writes (src/**/python/*.py: the sandbox's launcher and server,
// the tool zygote, the code verifier, the exported verl reward and tools, the verifiers and reasoning-gym harnesses; examples/unit-converter/*.py: New
// Environment's template) into TypeScript modules of string constants, so the bundles carry the
// programs inside their JavaScript (the .vsix ships no src/ and no .py file).
// `npm run build:python` after editing a .py; a unit test (test/unit/rl/sandbox/pythonSources.test.ts)
// fails while a .py and its generated module differ, and `npm run lint` compiles every .py.
//
// A constant is the concatenation of its parts, in order: the programs that share the sandbox's limits
// code start with src/rl/sandbox/python/common.py, because the sandbox runs each as one source
// (`python -I -S -c SOURCE`) with no import path. The constants are JSON-escaped, so no escaping style
// of TypeScript reaches the Python.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const COMMON = 'src/rl/sandbox/python/common.py';
const CONFINE = 'src/rl/sandbox/python/confine.py';

/**
 * @typedef {{ name: string, doc: string, parts: string[] }} PythonConstant
 * @typedef {{ out: string, constants: PythonConstant[] }} PythonModule
 */

/** Every generated module, its constants and the .py files (relative to the repository) each is made of. @type {PythonModule[]} */
export const PYTHON_MODULES = [
  {
    out: 'src/rl/sandbox/pythonSources.generated.ts',
    constants: [
      {
        name: 'LAUNCHER_PY',
        doc: 'The fresh-interpreter launcher: argv[1] = JSON config {cpu, mem, nproc, fsize, nofile, uid?, confine?, cwd, file}.',
        parts: [COMMON, CONFINE, 'src/rl/sandbox/python/launcher.py'],
      },
      {
        name: 'SERVER_PY',
        doc: "The warm pool's server: argv[1] = the folder of the work directories; one JSON request per line on stdin, one answer per line on stdout.",
        parts: [COMMON, CONFINE, 'src/rl/sandbox/python/server.py'],
      },
    ],
  },
  {
    out: 'src/rl/envs/workspace/toolZygotePy.generated.ts',
    constants: [
      {
        name: 'TOOL_ZYGOTE_PY',
        doc: "The tool zygote: argv[1] = the folder of the sessions' work folders; forks a session per episode (protocol in toolZygote.py).",
        parts: [COMMON, CONFINE, 'src/rl/envs/workspace/python/toolZygote.py'],
      },
    ],
  },
  {
    out: 'src/rl/envs/codeSandbox/verifierPy.generated.ts',
    constants: [
      {
        name: 'VERIFIER_PY',
        doc: 'The private verifier, run after a first line `_VERIFY = "<JSON of {code, fn, calls, nonce}>"` (see verifierProgram).',
        parts: ['src/rl/envs/codeSandbox/python/verifier.py'],
      },
    ],
  },
  {
    out: 'src/exporters/verl/rewardPy.generated.ts',
    constants: [
      {
        name: 'REWARD_PY',
        doc: 'The reward `agent-rl export verl` writes as agent_rl_reward.py (its settings in agent_rl_reward.json beside it).',
        parts: ['src/exporters/verl/python/reward.py'],
      },
    ],
  },
  {
    out: 'src/exporters/verl/workspacePy.generated.ts',
    constants: [
      {
        name: 'WORKSPACE_TOOL_PY',
        doc: "The verl tool class `agent-rl export verl` writes as agent_rl_workspace_tool.py for a workspace environment's tool file (settings in agent_rl_workspace.json).",
        parts: ['src/exporters/verl/python/sandboxClient.py', 'src/exporters/verl/python/workspaceSession.py', 'src/exporters/verl/python/workspaceTool.py'],
      },
      {
        name: 'WORKSPACE_REWARD_PY',
        doc: 'The verl reward `agent-rl export verl` writes as agent_rl_workspace_reward.py for a workspace environment (settings in agent_rl_workspace.json).',
        parts: ['src/exporters/verl/python/sandboxClient.py', 'src/exporters/verl/python/workspaceSession.py', 'src/exporters/verl/python/workspaceReward.py'],
      },
      {
        name: 'TOOL_RUNNER_PY',
        doc: "The end of the sandbox program the two send to /run_code, after the tool zygote's session half (see verlWorkspace.ts toolRunnerProgram).",
        parts: ['src/exporters/verl/python/toolRunner.py'],
      },
    ],
  },
  {
    out: 'src/exporters/verl/builtinToolsPy.generated.ts',
    constants: [
      {
        name: 'BUILTIN_TOOLS_PY',
        doc: "The verl tool classes `agent-rl export verl` writes as agent_rl_tools.py for the calculator, code and plain workspace exports (settings in agent_rl_tools.yaml's config entries).",
        parts: ['src/exporters/verl/python/sandboxClient.py', 'src/exporters/verl/python/builtinTools.py'],
      },
    ],
  },
  {
    out: 'src/rl/envs/verifiers/verifiersHarnessPy.generated.ts',
    constants: [
      {
        name: 'VERIFIERS_HARNESS_PY',
        doc: 'The harness around a verifiers environment, run as `python -c SOURCE CONFIG` (modes tasks and episode; see verifiersHarness.py).',
        parts: ['src/rl/envs/verifiers/python/verifiersHarness.py'],
      },
    ],
  },
  {
    out: 'src/rl/envs/reasoningGym/reasoningGymHarnessPy.generated.ts',
    constants: [
      {
        name: 'REASONING_GYM_HARNESS_PY',
        doc: 'The harness around reasoning-gym, run as `python -c SOURCE CONFIG` (modes generate and score; see reasoningGymHarness.py).',
        parts: ['src/rl/envs/reasoningGym/python/reasoningGymHarness.py'],
      },
    ],
  },
  {
    // New Environment's Python: the committed example folder is the source (it is what the command writes).
    out: 'src/shared/environmentTemplatePy.generated.ts',
    constants: [
      { name: 'TEMPLATE_TOOLS_PY', doc: "The unit-converter template's tools.py.", parts: ['examples/unit-converter/tools.py'] },
      { name: 'TEMPLATE_REWARD_PY', doc: "The unit-converter template's reward.py.", parts: ['examples/unit-converter/reward.py'] },
    ],
  },
];

/** The Python text of one constant: its parts concatenated. */
export function constantText(/** @type {PythonConstant} */ c) {
  return c.parts
    .map((p) => {
      const text = fs.readFileSync(path.join(ROOT, p), 'utf8');
      if (!text.endsWith('\n')) throw new Error(`${p} must end with a newline (its text is concatenated with the next part)`);
      return text;
    })
    .join('');
}

/** The generated TypeScript module, as committed. */
export function moduleText(/** @type {PythonModule} */ m) {
  const sources = [...new Set(m.constants.flatMap((c) => c.parts))].join(', ');
  const lines = [
    `// Generated by scripts/buildPython.mjs from ${sources}: do not edit (npm run build:python).`,
    '// Each constant is a whole Python program (its parts concatenated), JSON-escaped.',
  ];
  for (const c of m.constants) {
    lines.push('', `/** ${c.doc} From ${c.parts.map((p) => path.basename(p)).join(' + ')}. */`, `export const ${c.name} = ${JSON.stringify(constantText(c))};`);
  }
  return `${lines.join('\n')}\n`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  for (const m of PYTHON_MODULES) {
    fs.writeFileSync(path.join(ROOT, m.out), moduleText(m));
    process.stdout.write(`${m.out}: ${m.constants.map((c) => `${c.name} ${constantText(c).length} characters`).join(', ')}\n`);
  }
}
