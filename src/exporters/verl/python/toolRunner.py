
# ---- agent-rl export verl: the program verl's exported tool and reward send to `agent-rl sandbox serve` ----
# (src/exporters/verl/python/toolRunner.py). Above this line is the session half of the workbench's tool
# zygote (src/rl/envs/workspace/python/toolZygote.py, up to its zygote part): load(), invoke() and the
# schema and argument checks, so a call here answers exactly as a workbench session answers it.
#
# One /run_code is one fresh process, so an episode's tool state is rebuilt by replaying the episode's
# calls in order (the workbench keeps it in one forked process per episode). Input: one JSON object on
# stdin (never spliced into this code): {nonce, cap, result_bytes, file: {source, filename},
# calls: [{name, kwargs}], reward?: {task, trajectory}}. Output: one line per answer, `nonce + JSON`,
# flushed as each call returns (a call that hangs leaves the answers before it): {load_error} when the
# file does not import, else a call's reply ({ok, kind?, result?, printed?, error?, type?}) per call, or
# the reward's reply.
def _runner_main():
    global proto, CAP, RESULT_BYTES
    spec = json.loads(sys.stdin.read())
    nonce = spec['nonce']
    CAP = int(spec['cap'])
    RESULT_BYTES = int(spec['result_bytes'])
    out = sys.stdout

    class Tagged:
        # answer() writes here: every line of ours carries the nonce, whatever else reaches stdout
        def write(self, s):
            for line in s.splitlines():
                if line:
                    out.write(nonce + line + '\n')
        def flush(self):
            out.flush()

    proto = Tagged()
    try:
        load(spec['file']['source'], spec['file']['filename'], None, False)
    except BaseException as e:
        answer({'load_error': cut(''.join(traceback.format_exception(type(e), e, e.__traceback__)).rstrip())})
        return
    reward = spec.get('reward')
    if reward is not None:
        answer(invoke('reward', [reward['task'], reward['trajectory']], {}, True))
        return
    for call in spec['calls']:
        # as the zygote's serve() answers a session's `call` request
        try:
            kwargs = call.get('kwargs')
            if not isinstance(kwargs, dict):
                answer(error('bad_args', 'arguments must be a JSON object'))
            else:
                answer(invoke(call['name'], [], kwargs))
        except OutputCapExceeded:
            answer(error('output_cap', 'more than %d characters of output' % CAP))
        except Exception as e:
            answer(error('bad_args', 'the request could not be read (%s)' % type(e).__name__))

_runner_main()
