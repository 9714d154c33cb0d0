// The judge's key moved out of the process environment into memory (issue 51). The programs a run
// starts (an agent program, a verifiers module's Python, an OpenEnv server's command, the reasoning-gym
// harness) inherit process.env: a key left there would reach them. The run worker takes the variable
// the host hands the stored key in (AGENT_RL_JUDGE_API_KEY) at startup, before anything else; a judged
// run takes the variable its config names (reward.judge.apiKeyEnv) when it opens, before its
// environment starts any program. The value stays here, in this process only, for the judge's header.
//
// Kept by name so that a second run in the same process (the CLI's tests, a worker that opens twice)
// still finds a key the first run already moved; a value set in the environment since is newer and wins.
const held = new Map<string, string>();

/** The key in variable `name` ('' when never set), removed from process.env if it was there. */
export function takeJudgeKey(name: string): string {
  const now = process.env[name];
  if (now !== undefined) {
    held.set(name, now);
    delete process.env[name];
  }
  return held.get(name) ?? '';
}
