// `npm test` and `npm run bench` start with this: on a Node older than the floor, one sentence and
// exit 1 (the tests load better-sqlite3 13, which crashes Node 20 instead of throwing). The same floor
// as src/shared/nodeFloor.ts, which the bundles check; plain CommonJS so that any old Node runs it.
const [major, minor] = process.versions.node.split('.').map(Number);
const napi = Number(process.versions.napi || 0);
if (major < 22 || (major === 22 && minor < 14) || napi < 10) {
  process.stderr.write(`Agent RL Workbench needs Node.js 22.14 or newer (24 LTS recommended); this is Node ${process.versions.node} (Node-API ${napi}) at ${process.execPath}. Fix: \`source scripts/useNode.sh\` (brings Node 24 from the npm registry), or install Node.js 24 and put it first on PATH.\n`);
  process.exit(1);
}
