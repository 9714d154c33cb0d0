// What plays one episode of a program environment (agentEnv.ts), as the episode sees it: output as it
// comes, an end, and a way to stop it. For your own agent program it is a process of its own, started
// here (spawnEpisodeProcess); a verifiers environment's episodes are tasks of one Python server per run
// (verifiers/verifiersServer.ts), behind the same interface.
import { spawn } from 'node:child_process';
import { killGroup, programGroups } from './programGroups';

/** How an episode's program ended: its exit code or signal, or why it could not start. */
export interface EpisodeExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly error?: string;
}

/** What the episode hears from its program; `exit` comes once, after the output that preceded it. */
export interface EpisodeListener {
  stdout(text: string): void;
  stderr(text: string): void;
  exit(e: EpisodeExit): void;
}

export interface EpisodeProcess {
  /** Stops it and whatever it started (also after it exited: what it left running goes too). */
  stop(): void;
  /** The episode is over: stop what is left, wait a moment for an exit not heard yet, free what it held. */
  release(): Promise<void>;
}

/** What an episode's program is started with: the endpoint's address and key for this episode, the task. */
export interface EpisodeStart {
  readonly root: string;
  readonly baseUrl: string;
  readonly key: string;
  readonly taskJson: string;
}

/**
 * Starts `path args` in `root` as the user, in its own process group on POSIX (so that stopping it stops
 * what it started), with OPENAI_BASE_URL, OPENAI_API_KEY and AGENT_RL_TASK set and the task on stdin.
 */
export function spawnEpisodeProcess(path: string, args: readonly string[], s: EpisodeStart, on: EpisodeListener): EpisodeProcess {
  const child = spawn(path, args, {
    cwd: s.root,
    env: { ...process.env, OPENAI_BASE_URL: s.baseUrl, OPENAI_API_KEY: s.key, AGENT_RL_TASK: s.taskJson },
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: process.platform !== 'win32',
    windowsHide: true,
  });
  let ended = false;
  const end = (e: EpisodeExit): void => {
    if (ended) return;
    ended = true;
    on.exit(e);
  };
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (d: string) => on.stdout(d));
  child.stderr.on('data', (d: string) => on.stderr(d));
  child.stdin.on('error', () => undefined); // a program that does not read its stdin
  child.stdin.end(`${s.taskJson}\n`);
  if (child.pid !== undefined) programGroups.add(child.pid);
  child.on('error', (e) => {
    // a failed start (no such program); a failed kill of a running one is not an exit
    if (child.pid !== undefined) return;
    end({ code: null, signal: null, error: e.message });
  });
  // 'exit', then what is left in its pipes (its reward line) up to a moment: a grandchild that kept
  // them open must not hold the episode until the timeout
  child.on('exit', (code, signal) => {
    const late = setTimeout(() => end({ code, signal }), 2000);
    child.once('close', () => {
      clearTimeout(late);
      end({ code, signal });
    });
  });
  return {
    stop: () => {
      if (child.pid !== undefined) killGroup(child.pid);
    },
    release: async () => {
      if (child.pid === undefined) return;
      const running = child.exitCode === null && child.signalCode === null;
      killGroup(child.pid);
      programGroups.delete(child.pid);
      if (running)
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, 5000);
          child.once('exit', () => {
            clearTimeout(t);
            resolve();
          });
        });
      child.stdout.destroy();
      child.stderr.destroy();
    },
  };
}
