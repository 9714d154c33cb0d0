# Success of sampled training episodes with and without a repeated call (a call whose text equals the
# action just before it), per run, over the first 3 iterations. Run from the repository root.
import sqlite3, sys, collections
db=sys.argv[1] if len(sys.argv) > 1 else ".agent-rl/verify/beyond-imitation/2026-12-03T14-25-00Z/runs.sqlite"
c=sqlite3.connect(f'file:{db}?mode=ro',uri=True)
for run, name in c.execute("select id, name from runs where json_extract(config_json,'$.method')!='sft'").fetchall():
    rows=c.execute("""select t.id, t.success, u.action_text from trajectories t join turns u on u.trajectory_id=t.id
      where t.run_id=? and t.iteration<=3 order by t.id, u.turn_index""",(run,)).fetchall()
    eps=collections.OrderedDict()
    for tid, s, a in rows: eps.setdefault(tid,[s,[]])[1].append(a.strip())
    tally={True:[0,0],False:[0,0]}
    for s, acts in eps.values():
        rep=any(a.startswith('<call>') and a==b for a,b in zip(acts[1:],acts[:-1]))
        tally[rep][0]+=s; tally[rep][1]+=1
    print(f"run {run} {name}: episodes with a repeated call {tally[True][1]}, success {tally[True][0]/max(1,tally[True][1]):.1%}; without {tally[False][1]}, success {tally[False][0]/max(1,tally[False][1]):.1%}")
