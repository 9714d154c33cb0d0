// A workspace, agent, verifiers or OpenEnv environment's paths (tasks, tools, reward, the program, the module, the server command) are relative to the config file that names
// them: agent-rl and the workbench record that folder as envOptions.root when the config leaves it out.

/** `raw` with envOptions.root set to `folder` for a workspace config that gives no root (or a relative one). */
/** The two path operations it needs (node:path, or a stand-in in the tests). */
export interface PathOps {
  join(a: string, b: string): string;
  isAbsolute(p: string): boolean;
}

export function withConfigRoot(raw: Readonly<Record<string, unknown>>, folder: string, paths: PathOps): Record<string, unknown> {
  if (raw.env !== 'workspace' && raw.env !== 'agent' && raw.env !== 'verifiers' && raw.env !== 'openenv') return { ...raw };
  const eo = raw.envOptions;
  const envOptions: Record<string, unknown> = typeof eo === 'object' && eo !== null && !Array.isArray(eo) ? { ...(eo as Record<string, unknown>) } : {};
  const root = envOptions.root;
  if (root === undefined || root === '') envOptions.root = folder;
  else if (typeof root === 'string' && !paths.isAbsolute(root)) envOptions.root = paths.join(folder, root);
  return { ...raw, envOptions };
}
