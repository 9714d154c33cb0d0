// Imported first by every process entry point (cli, worker, backend, importer, probe), so it runs before
// any module loads better-sqlite3: on a Node older than the floor the addon would crash the process
// (SIGSEGV on Node 20) instead of throwing. Here the process says why in one sentence and exits 1.
import { NODE_RECOMMENDED, runtimeTooOld } from '../shared/nodeFloor';

const problem = runtimeTooOld(process.versions);
if (problem) {
  process.stderr.write(
    `agent-rl: ${problem}. Fix: install Node.js ${NODE_RECOMMENDED} (LTS) — in a checkout, \`source scripts/useNode.sh\` brings it from the npm registry — or, in VS Code, clear agentRl.nodePath to use VS Code's own runtime (1.101 or newer).\n`,
  );
  process.exit(1);
}
// A child forked on VS Code's own runtime carries ELECTRON_RUN_AS_NODE; nothing we start needs it, and
// an Electron app started from here with it set would not start as an app.
delete process.env.ELECTRON_RUN_AS_NODE;
