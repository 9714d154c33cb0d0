// The oldest runtime our processes run on, and the one sentence that says so. better-sqlite3 13 is a
// Node-API 10 addon: on Node 20 (Node-API 9) it does not throw, it crashes the process, so every entry
// point checks the versions before anything loads it. VS Code 1.101 and later ship Node 22.15+ in their
// extension host (Node-API 10), so their own runtime qualifies.

/** The floor: Node-API 10 arrived in 22.14. */
export const NODE_FLOOR = { major: 22, minor: 14, napi: 10 } as const;
/** The version the project is developed and tested on (Node 24 LTS). */
export const NODE_RECOMMENDED = '24';

/** What a runtime says of itself (`process.versions`). */
export interface RuntimeVersions {
  readonly node: string;
  readonly napi?: string | undefined;
  /** Set when the runtime is Electron's Node (VS Code's own, with ELECTRON_RUN_AS_NODE=1). */
  readonly electron?: string | undefined;
}

/** "Node 24.22.3" or "Node 22.22.1 (Electron 39.8.3)". */
export function describeVersions(v: RuntimeVersions): string {
  return `Node ${v.node.replace(/^v/, '')}${v.electron ? ` (Electron ${v.electron})` : ''}`;
}

/** Why this runtime cannot run our processes, or undefined when it can. */
export function runtimeTooOld(v: RuntimeVersions): string | undefined {
  const [major = 0, minor = 0] = v.node
    .replace(/^v/, '')
    .split('.')
    .map((x) => Number.parseInt(x, 10));
  const napi = Number.parseInt(v.napi ?? '0', 10);
  const oldNode = major < NODE_FLOOR.major || (major === NODE_FLOOR.major && minor < NODE_FLOOR.minor);
  if (!oldNode && napi >= NODE_FLOOR.napi) return undefined;
  return `${describeVersions(v)} (Node-API ${Number.isFinite(napi) ? napi : '?'}) is older than Agent RL Workbench's floor, Node ${NODE_FLOOR.major}.${NODE_FLOOR.minor} with Node-API ${NODE_FLOOR.napi}, which its SQLite engine (better-sqlite3 13) needs`;
}

/**
 * True when WebGPU (Dawn) and @tensorflow/tfjs-node are not offered: under Electron's runtime, whose
 * V8 memory cage rejects the external buffers Dawn hands out. They need a system Node (agentRl.nodePath).
 */
export function systemNodeOnlyBackendsBlocked(v: RuntimeVersions): boolean {
  return v.electron !== undefined && v.electron !== '';
}
