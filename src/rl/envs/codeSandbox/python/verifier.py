# The private verifier of the code environment (src/rl/envs/codeSandbox/codeEnv.ts) and of the reward
# `agent-rl export verl` writes (src/exporters/verl/python/reward.py). It runs a candidate's code as
# main.py in a namespace of its own, calls its function on each hidden input, and prints one line: the
# nonce, then the verdict as JSON, {"results": [["ok", repr(value)] or ["error", exception name], ...]}
# or {"error": why}.
#
# Its inputs are data, never code: the program sent to the sandbox is one line
#   _VERIFY = "<JSON text of {code, fn, calls, nonce}>"
# (a JSON string is a Python string literal) followed by this file. verifierProgram() in codeEnv.ts and
# verdict() in reward.py write that line.
import json as _j, sys as _s
_v = _j.loads(_VERIFY)
_src = _v['code']
_calls = _v['calls']
_ns = {'__name__': '__verify__'}
try:
    exec(compile(_src, 'main.py', 'exec'), _ns)
    _f = _ns.get(_v['fn'])
    if not callable(_f):
        _res = {'error': 'no function ' + _v['fn']}
    else:
        _res = {'results': []}
        for _a in _calls:
            try:
                _res['results'].append(['ok', repr(_f(*eval('(' + _a + ',)', {})))])
            except Exception as _e:
                _res['results'].append(['error', type(_e).__name__])
except BaseException as _e:
    _res = {'error': 'the code failed to run: ' + type(_e).__name__}
_s.stdout.flush()
print('\n' + _v['nonce'] + _j.dumps(_res))
