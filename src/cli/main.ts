// The agent-rl command: train, runs, show, … (dispatch in cli.ts). Same engine and same database as the
// VS Code extension. Exit codes: 0 ok, 1 failure while running, 2 bad input (usage, config, database), 130 cancelled.
import '../store/nodeFloorGuard'; // first: refuses a Node older than the floor before better-sqlite3 loads
import { runCli } from './cli';

void runCli(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
