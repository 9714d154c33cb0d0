// The process groups of the agent programs still running, stopped when this process ends however it
// ends (a normal exit, process.exit, SIGTERM or SIGINT). These are process-wide handlers, installed once
// for the whole process on the first program started, apart from any one episode (agentEnv.ts starts
// and stops its own program through them). A SIGKILL cannot be caught: a program left behind then finds
// the endpoint gone at its next request, and an OpenAI client ends with a connection error.
import { spawn } from 'node:child_process';

const liveGroups = new Set<number>();
let guarded = false;

/** Stops a program and whatever it started: its process group on POSIX (it was started detached), its tree on Windows. */
export function killGroup(pid: number): void {
  try {
    if (process.platform === 'win32') spawn('taskkill', ['/pid', String(pid), '/T', '/F'], { stdio: 'ignore', windowsHide: true });
    else process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

function guardGroups(): void {
  if (guarded) return;
  guarded = true;
  const killAll = (): void => {
    for (const pid of liveGroups) killGroup(pid);
    liveGroups.clear();
  };
  process.on('exit', killAll);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    const onSignal = (): void => {
      killAll();
      // without another listener the signal's default (ending the process) must still happen
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.once(signal, onSignal);
  }
}

/** The groups this process stops on its way out: a started program joins (the handlers go in on the first), a closed one leaves. */
export const programGroups = {
  add(pid: number): void {
    liveGroups.add(pid);
    guardGroups();
  },
  delete(pid: number): void {
    liveGroups.delete(pid);
  },
};
