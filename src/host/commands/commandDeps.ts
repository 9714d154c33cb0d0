// What every command of the Runs tree is handed (registerRunCommands builds it once, in extension.ts):
// its own module so that a command in a file of its own (forkRun.ts) can name it without importing the
// file that registers it — that import made a circle.
import type * as vscode from 'vscode';
import type { LiveRuns } from '../liveRuns';
import type { HostProcesses } from '../processes/hostProcesses';
import type { RunsTree } from '../views/runsTree';

export interface CommandDeps {
  readonly tree: RunsTree;
  readonly processes: HostProcesses;
  readonly live: LiveRuns;
  readonly output: vscode.OutputChannel;
  readonly extensionUri: vscode.Uri;
  /** Selects a trajectory in the Runs tree (the inspector calls it for the trajectory it shows). */
  readonly reveal: (trajectoryId: number) => void;
}
