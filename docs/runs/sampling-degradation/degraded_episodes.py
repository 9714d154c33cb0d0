# Per iteration of each run behind docs/runs/sampling-degradation/README.md: sampled episodes ended by the
# context or the turn cap, and episodes with a malformed action (first 3 iterations -> last 3, peak, and
# the malformed series). Run from the repository root: python3 docs/runs/sampling-degradation/degraded_episodes.py
import sqlite3, json, sys
def run_id(c, run):
    # a method name ('grpo', 'rs-sft') names the run by method: npm start's two RL runs open side by side,
    # so which gets id 2 varies
    return run if isinstance(run, int) else c.execute("select id from runs where method=?", (run,)).fetchone()[0]
def series(db, run):
    c=sqlite3.connect(db)
    run=run_id(c, run)
    rows=c.execute("""select t.iteration, t.termination in ('context_exhausted','turn_cap'),
      exists(select 1 from turns u where u.trajectory_id=t.id and json_extract(u.action_json,'$.kind')='format_error')
      from trajectories t where t.run_id=? order by t.iteration""",(run,)).fetchall()
    it={}
    for i,tr,mf in rows:
        a=it.setdefault(i,[0,0,0]); a[0]+=tr; a[1]+=mf; a[2]+=1

    return [it[k] for k in sorted(it)]
def summ(s, j):
    xs=[x[j] for x in s]; m=lambda a: sum(a)/len(a)
    return f"{m(xs[:3]):.1f} → {m(xs[-3:]):.1f} (peak {max(xs)})"
for label, db, run in [
  ('npm start GRPO (+ clip-higher 0.2/0.28 + zero-adv filtering), T 1', '.agent-rl/measurements/sampling-degradation/npm-start-f74b02c.sqlite', 5),
  ('npm start RS-SFT, T 1', '.agent-rl/measurements/sampling-degradation/npm-start-f74b02c.sqlite', 6),
  ('GRPO, clip 0.2/0.2', '.agent-rl/measurements/sampling-degradation/runs.sqlite', 1),
  ('GRPO + overlong filter', '.agent-rl/measurements/sampling-degradation/runs.sqlite', 2),
  ('GRPO, temperature 0.8', '.agent-rl/measurements/sampling-degradation/runs.sqlite', 3),
  ('GRPO, klCoef 0.1', '.agent-rl/measurements/sampling-degradation/runs.sqlite', 4),
  ('GRPO, learning rate 1e-4', '.agent-rl/measurements/sampling-degradation/runs.sqlite', 5),
  ('GRPO, formatErrorCost 0.1', '.agent-rl/measurements/sampling-degradation/runs.sqlite', 7),
  ('GRPO, formatErrorCost 0.1, temperature 0.8', '.agent-rl/measurements/sampling-degradation/runs.sqlite', 6),
  # constrained decoding: each `npm start` in its own folder (its GRPO and RS-SFT runs by method)
  *[(f'npm start {m}, {label}', f'.agent-rl/measurements/constrained-decoding/{folder}/runs.sqlite', run)
    for folder, label in [('seed1-ctx192', 'grammar, context 192, seed 1'), ('seed2-ctx192', 'grammar, context 192, seed 2'),
                          ('seed1-ctx256', 'grammar, context 256, seed 1'), ('seed2-ctx256', 'grammar, context 256, seed 2'),
                          ('seed3-ctx256', 'grammar, context 256, seed 3'), ('free-seed1-ctx256', 'free decoding, context 256, seed 1'),
                          ('budget-seed1-ctx256-9433363', 'grammar + budget, context 256, seed 1'),
                          ('budget-seed2-ctx256-9433363', 'grammar + budget, context 256, seed 2'),
                          ('budget-seed3-ctx256-9433363', 'grammar + budget, context 256, seed 3'),
                          ('budget-seed1-ctx512-9e51191', 'grammar + budget, context 512, seed 1'),
                          ('budget-seed2-ctx512-9433363', 'grammar + budget, context 512, seed 2'),
                          ('budget-seed3-ctx512-9e51191', 'grammar + budget, context 512, seed 3'),
                          ('free-seed1-ctx512-9e51191', 'free decoding, context 512, seed 1')]
    for m, run in [('GRPO', 'grpo'), ('RS-SFT', 'rs-sft')]]]:
    s=series(db, run)
    print(f"| {label} | {summ(s,0)} | {summ(s,1)} | {' '.join(str(x[1]) for x in s)} |")
