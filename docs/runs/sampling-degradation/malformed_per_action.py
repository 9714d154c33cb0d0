# The chance that an action is malformed, per iteration: episodes with a malformed action over the actions
# taken up to and including the first malformed one (later ones follow from it). From the repository root.
import sqlite3, collections
def hz(db, run):
    c=sqlite3.connect(db)
    if isinstance(run, str): run=c.execute("select id from runs where method=?", (run,)).fetchone()[0]
    rows=c.execute("""select t.id, t.iteration, u.turn_index, json_extract(u.action_json,'$.kind')='format_error' from trajectories t join turns u on u.trajectory_id=t.id where t.run_id=? order by t.id, u.turn_index""",(run,)).fetchall()
    eps=collections.defaultdict(list)
    for tid,it,i,f in rows: eps[(tid,it)].append(f)
    per=collections.defaultdict(lambda:[0,0])
    for (tid,it),fs in eps.items():
        n=0
        for f in fs:
            n+=1
            if f: break
        per[it][0]+= 1 if any(fs) else 0; per[it][1]+=n
    return ' '.join(f"{per[i][0]/per[i][1]*100:.1f}" for i in sorted(per))
print('npm start GRPO', hz('.agent-rl/measurements/sampling-degradation/npm-start-f74b02c.sqlite',5))
print('RS-SFT', hz('.agent-rl/measurements/sampling-degradation/npm-start-f74b02c.sqlite',6))
print('T0.8', hz('.agent-rl/measurements/sampling-degradation/runs.sqlite',3))
print('formatErrorCost 0.1', hz('.agent-rl/measurements/sampling-degradation/runs.sqlite',7))
print('formatErrorCost 0.1, T0.8', hz('.agent-rl/measurements/sampling-degradation/runs.sqlite',6))
for folder in ['seed1-ctx192', 'seed2-ctx192', 'seed1-ctx256', 'seed2-ctx256', 'seed3-ctx256', 'free-seed1-ctx256',
               'budget-seed1-ctx256-9433363', 'budget-seed2-ctx256-9433363', 'budget-seed3-ctx256-9433363',
               'budget-seed1-ctx512-9e51191', 'budget-seed2-ctx512-9433363', 'budget-seed3-ctx512-9e51191', 'free-seed1-ctx512-9e51191']:
    print(folder, 'GRPO', hz(f'.agent-rl/measurements/constrained-decoding/{folder}/runs.sqlite', 'grpo'))
