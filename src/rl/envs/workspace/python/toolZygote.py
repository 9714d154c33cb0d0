# The tool zygote (src/rl/envs/workspace/toolSession.ts): one Python process per (isolation level,
# interpreter, limits), started once in the sandbox with the heavy modules imported, that forks a
# session per episode. A session applies the limits (rlimits, its own uid when we are root, a scrubbed
# environment, its own work folder), imports the workspace's tool file and answers one JSON request per
# line; its module state and work folder live as long as the episode, so a tool can keep state across
# turns. print() inside a call is captured (capped) for the observation; anything written to file
# descriptors 1 and 2 goes to the zygote, which counts it against the cap. The workbench never trusts
# an answer: it ends a session on a timeout, a flood or garbage, and the zygote kills its process
# group, its uid and its orphans.
#
# argv[1] = the folder the sessions' work folders go in. Workbench → zygote, one JSON line each:
# {op: 'open', sid, cfg: {cpu, mem, nproc, fsize, nofile, uid?, cap, resultBytes}, load: {source,
# filename, listing}}, {op: 'req', sid, body}, {op: 'close', sid}. Zygote → workbench: `sid<TAB>json`
# lines, a session's answers or {dead: "kind: why"}; a session's first line says whether its file
# imported (with the tools' schemas when `listing`). A session's requests: call, call_text, exec.
#
# src/rl/sandbox/python/common.py and confine.py are put in front of this file by
# scripts/buildPython.mjs: json, linecache, os, signal, sys, apply_limits, scrub_env, children_of and
# confine (the landlock level's confinement of each session) come from there.
import ast, inspect, io, re, traceback, types, typing

CAP = 1 << 20
RESULT_BYTES = 4096

class OutputCapExceeded(BaseException):
    pass

class Capture(io.TextIOBase):
    def __init__(self):
        self.parts = []
        self.size = 0
    def write(self, s):
        s = str(s)
        self.size += len(s)
        if self.size > CAP:
            raise OutputCapExceeded()
        self.parts.append(s)
        return len(s)
    def text(self):
        return ''.join(self.parts)

proto = None

def answer(obj):
    proto.write(json.dumps(obj) + '\n')
    proto.flush()

def cut(s):
    return s if len(s) <= RESULT_BYTES else s[:RESULT_BYTES] + '... [cut: %d characters in all]' % len(s)

NONE = type(None)

def is_union(tp):
    return typing.get_origin(tp) is typing.Union or (hasattr(types, 'UnionType') and isinstance(tp, types.UnionType))

def schema_of(tp):
    if tp is inspect.Parameter.empty or tp is typing.Any:
        return {}
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is bool: return {'type': 'boolean'}
    if tp is int: return {'type': 'integer'}
    if tp is float: return {'type': 'number'}
    if tp is str: return {'type': 'string'}
    if tp is NONE: return {'type': 'null'}
    if (tp is tuple or origin is tuple) and args and not (len(args) == 2 and args[1] is Ellipsis):
        return {'type': 'array', 'prefixItems': [schema_of(a) for a in args], 'minItems': len(args), 'maxItems': len(args)}
    if tp is list or origin is list or tp is tuple or origin is tuple:
        return {'type': 'array', **({'items': schema_of(args[0])} if args else {})}
    if tp is dict or origin is dict:
        return {'type': 'object'}
    if origin is typing.Literal:
        return {'enum': list(args)}
    if is_union(tp):
        return {'anyOf': [schema_of(a) for a in args]}
    return {}

def type_name(tp):
    s = schema_of(tp)
    if 'type' in s: return s['type']
    if 'enum' in s: return ' | '.join(json.dumps(v) for v in s['enum'])
    if 'anyOf' in s: return ' | '.join(type_name(a) for a in typing.get_args(tp))
    return 'any'

def fits(value, tp):
    if tp is inspect.Parameter.empty or tp is typing.Any:
        return True
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is bool: return isinstance(value, bool)
    if tp is int: return isinstance(value, int) and not isinstance(value, bool)
    if tp is float: return isinstance(value, (int, float)) and not isinstance(value, bool)
    if tp is str: return isinstance(value, str)
    if tp is NONE: return value is None
    if (tp is tuple or origin is tuple) and args and not (len(args) == 2 and args[1] is Ellipsis):
        return isinstance(value, (list, tuple)) and len(value) == len(args) and all(fits(v, a) for v, a in zip(value, args))
    if tp is list or origin is list or tp is tuple or origin is tuple:
        if not isinstance(value, (list, tuple)): return False
        item = args[0] if args else inspect.Parameter.empty
        return all(fits(v, item) for v in value)
    if tp is dict or origin is dict: return isinstance(value, dict)
    if origin is typing.Literal: return value in args
    if is_union(tp): return any(fits(value, a) for a in args)
    return True

def describe(fn):
    doc = inspect.getdoc(fn) or ''
    summary, params, section = [], {}, None
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped.lower() in ('args:', 'arguments:', 'parameters:'):
            section = 'args'
            continue
        if stripped.lower() in ('returns:', 'raises:', 'examples:', 'example:'):
            section = 'other'
            continue
        if section == 'args' and ':' in stripped:
            name, text = stripped.split(':', 1)
            params[name.split('(')[0].strip()] = text.strip()
        elif section is None:
            if stripped == '' and summary:
                section = 'other'
            elif stripped:
                summary.append(stripped)
    return ' '.join(summary), params

tools = {}
hints = {}
listing = []
namespace = {}

def describe_tool(name, fn):
    sig, th = hints_of(name)
    summary, pdocs = describe(fn)
    props, required, shown = {}, [], []
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        tp = th.get(p.name, p.annotation)
        s = dict(schema_of(tp))
        if p.name in pdocs: s['description'] = pdocs[p.name]
        if p.default is not p.empty:
            try:
                json.dumps(p.default)
                s['default'] = p.default
            except TypeError:
                pass
        else:
            required.append(p.name)
        props[p.name] = s
        shown.append('%s: %s%s' % (p.name, type_name(tp), '' if p.default is p.empty else ' = ' + repr(p.default)))
    return {'name': name, 'description': summary, 'parameters': {'type': 'object', 'properties': props, 'required': required},
            'signature': '%s(%s)' % (name, ', '.join(shown))}

def hints_of(name):
    # computed on a tool's first call: a session that never calls it never pays for the introspection
    h = hints.get(name)
    if h is None:
        fn = tools[name]
        try:
            th = typing.get_type_hints(fn)
        except Exception:
            th = {}
        h = hints[name] = (inspect.signature(fn), th)
    return h

def signature_of(name):
    sig, th = hints_of(name)
    parts = []
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        parts.append('%s: %s%s' % (p.name, type_name(th.get(p.name, p.annotation)), '' if p.default is p.empty else ' = ' + repr(p.default)))
    return '%s(%s)' % (name, ', '.join(parts))

def load(source, filename, code, want_listing):
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    mod = {'__name__': '__tools__', '__file__': filename, '__builtins__': __builtins__}
    exec(code if code is not None else compile(source, filename, 'exec'), mod)
    names = mod.get('__all__')
    if names is None:
        names = [k for k, v in mod.items() if inspect.isfunction(v) and v.__module__ == '__tools__' and not k.startswith('_')]
    for name in names:
        fn = mod.get(name)
        if not callable(fn):
            raise TypeError('__all__ names %r, which is not a function' % name)
        tools[name] = fn
        namespace[name] = fn
        if want_listing:
            listing.append(describe_tool(name, fn))
    examples = mod.get('EXAMPLES', {})
    return examples if isinstance(examples, dict) else {}

def error(kind, message):
    return {'ok': False, 'kind': kind, 'error': cut(message)}

def invoke(name, args, kwargs, whole=False):
    fn = tools.get(name)
    if fn is None:
        return error('unknown_tool', 'unknown tool %r; the tools are: %s' % (name, ', '.join(sorted(tools)) or '(none)'))
    sig, th = hints_of(name)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        return error('bad_args', '%s: %s; it takes %s' % (name, e, signature_of(name)))
    for pname, value in bound.arguments.items():
        tp = th.get(pname, inspect.Parameter.empty)
        p = sig.parameters[pname]
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if not fits(value, tp):
            return error('bad_args', '%s: argument %s must be %s, got %s' % (name, pname, type_name(tp), cut(repr(value))))
    capture = Capture()
    old = sys.stdout
    sys.stdout = capture
    try:
        result = fn(*bound.args, **bound.kwargs)
    except OutputCapExceeded:
        sys.stdout = old
        return error('output_cap', '%s printed more than %d characters' % (name, CAP))
    except BaseException as e:
        sys.stdout = old
        tb = traceback.format_exception(type(e), e, e.__traceback__.tb_next if e.__traceback__ else None)
        return error('raised', ''.join(tb).rstrip())
    sys.stdout = old
    if isinstance(result, str):
        text = result
    else:
        try:
            text = json.dumps(result)
        except (TypeError, ValueError):
            text = repr(result)
    return {'ok': True, 'result': text if whole else cut(text), 'type': type(result).__name__, 'printed': cut(capture.text())}

def read_call(text):
    # positional literals that are also JSON (numbers, "strings", lists) skip the Python parser
    def no_constant(c):
        raise ValueError(c)
    try:
        args = json.loads('[' + text + ']', parse_constant=no_constant)
        if isinstance(args, list) and not re.search(r'\b(true|false|null)\b', text):
            return args, {}
    except (ValueError, RecursionError):
        pass
    try:
        tree = ast.parse('_f(' + text + ')', mode='eval')
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        raise ValueError('could not read the arguments %s; write literals such as 3, 2.5, "km", [1, 2]' % cut(repr(text)))
    call = tree.body
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == '_f'):
        raise ValueError('could not read the arguments %s; write literals separated by commas' % cut(repr(text)))
    args, kwargs = [], {}
    def literal(node, what):
        try:
            return ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            raise ValueError('%s is not a literal (%s); write literals such as 3, 2.5, "km", [1, 2]' % (what, cut(ast.get_source_segment(text_of, node) or '?')))
    text_of = '_f(' + text + ')'
    for i, node in enumerate(call.args):
        if isinstance(node, ast.Starred):
            raise ValueError('*args are not allowed in a call')
        args.append(literal(node, 'argument %d' % (i + 1)))
    for kw in call.keywords:
        if kw.arg is None:
            raise ValueError('**kwargs are not allowed in a call')
        kwargs[kw.arg] = literal(kw.value, 'argument ' + kw.arg)
    return args, kwargs

def run_code(code):
    capture = Capture()
    old_out, old_err = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = capture
    status = 0
    try:
        linecache.cache['main.py'] = (len(code), None, code.splitlines(True), 'main.py')
        namespace['__name__'] = '__main__'
        namespace.setdefault('__builtins__', __builtins__)
        exec(compile(code, 'main.py', 'exec'), namespace)
    except OutputCapExceeded:
        sys.stdout, sys.stderr = old_out, old_err
        return {'ok': False, 'kind': 'output_cap', 'error': 'the code printed more than %d characters' % CAP, 'printed': cut(''.join(capture.parts)[-RESULT_BYTES:])}
    except BaseException as e:
        status = 1
        tb = e.__traceback__.tb_next if e.__traceback__ is not None and not isinstance(e, SyntaxError) else None
        try:
            capture.write(''.join(traceback.format_exception(type(e), e, tb)))
        except OutputCapExceeded:
            pass
    sys.stdout, sys.stderr = old_out, old_err
    text = capture.text()
    return {'ok': status == 0, 'kind': 'code', 'exit': status, 'printed': text[-RESULT_BYTES:] if len(text) > RESULT_BYTES else text}

def serve(inp):
    for line in inp:
        try:
            req = json.loads(line)
            op = req.get('op')
            if op == 'call':
                args, kwargs = req.get('args', []), req.get('kwargs', {})
                if not isinstance(args, list) or not isinstance(kwargs, dict):
                    answer(error('bad_args', 'arguments must be a JSON object'))
                else:
                    answer(invoke(req['name'], args, kwargs, req.get('whole') is True))
            elif op == 'call_text':
                try:
                    args, kwargs = read_call(req['text'])
                except (ValueError, TypeError) as e:
                    answer(error('bad_args', '%s: %s' % (req['name'], e)))
                    continue
                answer(invoke(req['name'], args, kwargs))
            elif op == 'exec':
                answer(run_code(req['code']))
            else:
                answer(error('protocol', 'unknown request %r' % op))
        except OutputCapExceeded:
            answer(error('output_cap', 'more than %d characters of output' % CAP))
        except Exception as e:
            answer(error('bad_args', 'the request could not be read (%s)' % type(e).__name__))

# ---- the zygote: one per (level, interpreter, tool file); a forked child per episode ----
import ctypes, select, shutil, time

def close_fds(keep, hi):
    # every descriptor the zygote holds is below hi (its pipes), so this is a few hundred closes at most
    for fd in range(3, hi):
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass

def child_main(cfg, cwd, req_r, resp_w, out_w, spec, code):
    global proto, CAP, RESULT_BYTES
    os.setsid()
    null = os.open('/dev/null', os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(out_w, 1)
    os.dup2(out_w, 2)
    close_fds({req_r, resp_w}, max([req_r, resp_w, out_w, 16] + list(owner)) + 1)
    sys.stdout = sys.stderr = open(1, 'w', buffering=1, closefd=False)
    os.mkdir(cwd, 0o700)
    apply_limits(cfg, cwd)
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG, after setuid (which clears it): dies with the zygote
    except Exception:
        pass
    if os.getppid() != ZYGOTE_PID:
        os._exit(71)
    if cfg.get('confine'):
        confine(cwd)
    scrub_env(cwd)
    CAP = int(cfg['cap'])
    RESULT_BYTES = int(cfg['resultBytes'])
    proto = os.fdopen(resp_w, 'w', encoding='utf-8', buffering=1)
    # the first line a session writes: its tool file imported (with the schemas when asked), or why not
    try:
        examples = load(spec['source'], spec['filename'], code, spec.get('listing') is True)
        answer({'ok': True, 'tools': listing, 'examples': examples})
    except BaseException as e:
        answer({'ok': False, 'kind': 'import', 'error': cut(''.join(traceback.format_exception(type(e), e, e.__traceback__)).rstrip())})
    serve(os.fdopen(req_r, 'r', encoding='utf-8'))
    os._exit(0)

try:
    libc = ctypes.CDLL(None)
    libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: orphans of a session come back here
    # PR_SET_DUMPABLE 0, inherited by the sessions: a session running as our user cannot open our
    # /proc/PID/fd (the host channel) or ptrace us
    libc.prctl(4, 0, 0, 0, 0)
except Exception:
    pass
ZYGOTE_PID = os.getpid()

BASE = sys.argv[1]
host_out = open(1, 'w', buffering=1, closefd=False)
sessions = {}
owner = {}

def emit(sid, line):
    host_out.write('%d\t%s\n' % (sid, line))
    host_out.flush()

def kill_orphans():
    # children of ours that are no session: what a session left behind (reparented to us, the subreaper)
    live = set(x['pid'] for x in sessions.values())
    for pid in children_of(os.getpid()) or []:
        if pid not in live:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (OSError, ChildProcessError):
                pass

def remove_tree(path):
    def unlock(fn, p, exc):
        # a session may have taken its own permissions away: give them back, then retry
        try:
            os.chmod(os.path.dirname(p), 0o700)
            os.chmod(p, 0o700)
            fn(p)
        except OSError:
            pass
    shutil.rmtree(path, onerror=unlock)

def end(sid, why=None):
    s = sessions.pop(sid, None)
    if s is None:
        return
    for kill in (lambda: os.killpg(s['pid'], signal.SIGKILL), lambda: os.kill(s['pid'], signal.SIGKILL)):
        try:
            kill()  # the group, and the process itself (it may not have called setsid yet)
        except OSError:
            pass
    for fd in (s['req_w'], s['resp_r'], s['out_r']):
        owner.pop(fd, None)
        try:
            os.close(fd)
        except OSError:
            pass
    try:
        os.waitpid(s['pid'], 0)
    except ChildProcessError:
        pass
    kill_orphans()
    if s['uid']:
        if not sweep_uids:
            sweep_since[0] = time.monotonic()
        sweep_uids.add(s['uid'])
    remove_tree(s['cwd'])
    if why is not None:
        emit(sid, json.dumps({'dead': why}))

sweep_uids = set()
sweep_since = [0.0]

def sweep_pending():
    # one scan of /proc for every session ended since the last: whatever still runs as their uids
    # (a process that left the session's group and parent) is killed
    uids = set(sweep_uids)
    sweep_uids.clear()
    for d in os.listdir('/proc'):
        if d.isdigit():
            try:
                with open('/proc/%s/status' % d) as f:
                    for l in f:
                        if l.startswith('Uid:'):
                            if int(l.split()[1]) in uids:
                                os.kill(int(d), signal.SIGKILL)
                            break
            except (OSError, ValueError):
                pass

compiled = {}

def code_of(spec):
    # compiled once here (compiling runs nothing), so a session only executes it
    key = (spec['filename'], spec['source'])
    if key not in compiled:
        try:
            compiled[key] = compile(spec['source'], spec['filename'], 'exec')
        except BaseException:
            compiled[key] = None  # the session compiles it again and reports the error
    return compiled[key]

def open_session(sid, cfg, spec):
    code = code_of(spec)
    if not cfg.get('uid'):
        # without our own uids every session counts against the user's process limit: leave room for the live ones
        cfg = dict(cfg, nproc=int(cfg['nproc']) + len(sessions) + 1)
    req_r, req_w = os.pipe()
    resp_r, resp_w = os.pipe()
    out_r, out_w = os.pipe()
    cwd = os.path.join(BASE, 's%d' % sid)
    pid = os.fork()
    if pid == 0:
        try:
            child_main(cfg, cwd, req_r, resp_w, out_w, spec, code)
        except BaseException as e:
            try:
                os.write(2, ('session failed to start: %r\n' % (e,)).encode())
            except OSError:
                pass
        os._exit(70)
    for fd in (req_r, resp_w, out_w):
        os.close(fd)
    load_ms = int(cfg.get('loadTimeoutMs', 20000))
    sessions[sid] = {'pid': pid, 'uid': cfg.get('uid'), 'req_w': req_w, 'resp_r': resp_r, 'out_r': out_r, 'buf': bytearray(), 'out': 0, 'tail': b'', 'cap': int(cfg['cap']), 'cwd': cwd, 'cpu': cfg.get('cpu'),
                     'deadline': (time.monotonic() + load_ms / 1000.0, 'timeout: the file did not import within %d ms' % load_ms)}
    for fd in (resp_r, out_r):
        os.set_blocking(fd, False)  # a descriptor number reused within one poll round never blocks us
    owner[resp_r] = (sid, 'resp')
    owner[out_r] = (sid, 'out')

def host_request(msg):
    op, sid = msg.get('op'), int(msg.get('sid', -1))
    if op == 'open':
        try:
            open_session(sid, msg['cfg'], msg['load'])
        except OSError as e:  # out of processes or descriptors: this session fails, the zygote goes on
            emit(sid, json.dumps({'dead': 'crashed: the session could not start (%s)' % e.strerror}))
    elif op == 'req':
        s = sessions.get(sid)
        if s is None:
            emit(sid, json.dumps({'dead': 'crashed: the session is gone'}))
            return
        try:
            # the request is the host's JSON text, forwarded as it is: the zygote never parses model output
            os.write(s['req_w'], (msg['body'] + '\n').encode())
        except OSError as e:
            end(sid, 'crashed: the tool process is gone (%s)' % e.strerror)
            return
        # the call's own time starts now, not while the request waited behind other sessions' forks
        ms = int(msg.get('timeoutMs', 5000))
        s['deadline'] = (time.monotonic() + ms / 1000.0, 'timeout: no answer within %d ms' % ms)
    elif op == 'close':
        end(sid)

import gc
gc.freeze()  # the zygote's objects stay out of the sessions' collections: fewer copied pages per fork
host_out.write(json.dumps({'ready': True}) + '\n')
host_buf = b''
todo = []
watched = set()
poller = select.poll()
OPENS_PER_ROUND = 4

def answered(fd):
    p = select.poll()
    p.register(fd, select.POLLIN)
    return bool(p.poll(0))
while True:
    # host messages in order, but at most a few forks per round, so answers of live sessions are
    # forwarded (and their deadlines checked) while hundreds of episodes open at once
    opened = 0
    while todo and (todo[0].get('op') != 'open' or opened < OPENS_PER_ROUND):
        msg = todo.pop(0)
        opened += msg.get('op') == 'open'
        try:
            host_request(msg)
        except Exception as e:  # a malformed message fails its session, never the zygote
            try:
                emit(int(msg.get('sid', -1)), json.dumps({'dead': 'crashed: %s' % type(e).__name__}))
            except Exception:
                pass
    now = time.monotonic()
    for sid in [k for k, x in sessions.items() if x.get('deadline') and x['deadline'][0] <= now]:
        if not answered(sessions[sid]['resp_r']):  # an answer that waited while we forked is in time
            end(sid, sessions[sid]['deadline'][1])
    deadlines = [x['deadline'][0] for x in sessions.values() if x.get('deadline')]
    wait = 0 if todo else min([20 if sweep_uids else 1e9] + [max(0.0, (d - now) * 1000) for d in deadlines])
    # poll, not select: hundreds of live sessions pass select's 1024-descriptor limit
    want = {0} | set(owner)
    for fd in watched - want:
        poller.unregister(fd)
    for fd in want - watched:
        poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    watched = want
    try:
        readable = [fd for fd, _ in poller.poll(None if wait >= 1e9 else int(wait) + 1)]
    except InterruptedError:
        continue
    if sweep_uids and (not readable or time.monotonic() - sweep_since[0] > 0.2):
        sweep_pending()
    for fd in readable:
        if fd == 0:
            data = os.read(0, 1 << 16)
            if not data:
                for sid in list(sessions):
                    end(sid)
                if sweep_uids:
                    sweep_pending()
                os._exit(0)
            host_buf += data
            while b'\n' in host_buf:
                line, host_buf = host_buf.split(b'\n', 1)
                if line.strip():
                    try:
                        todo.append(json.loads(line))
                    except ValueError:
                        pass  # the host writes JSON; anything else is dropped
            continue
        if fd not in owner:
            continue
        sid, kind = owner[fd]
        s = sessions[sid]
        try:
            data = os.read(fd, 1 << 16)
        except BlockingIOError:
            continue
        except OSError:
            data = b''
        if kind == 'resp':
            if not data:
                status = ''
                try:
                    pid, st = os.waitpid(s['pid'], os.WNOHANG)
                    if pid:
                        sig = os.WTERMSIG(st) if os.WIFSIGNALED(st) else 0
                        status = ('the CPU-time limit of %s s was reached' % s['cpu'] if sig == signal.SIGXCPU else 'signal %d' % sig) if sig else 'code %d' % os.WEXITSTATUS(st)
                except ChildProcessError:
                    pass
                tail = s['tail'].decode('utf-8', 'replace').strip().split('\n')[-1:]
                end(sid, 'crashed: the tool process exited%s%s' % (' (%s)' % status if status else '', ': ' + tail[0] if tail and tail[0] else ''))
                continue
            s['buf'] += data
            if len(s['buf']) > 2 * s['cap'] + (1 << 20):
                end(sid, 'output_cap: the session answered more than %d bytes' % (2 * s['cap']))
                continue
            if b'\n' in s['buf']:
                s['deadline'] = None  # answered
            while b'\n' in s['buf']:
                at = s['buf'].index(b'\n')
                line = bytes(s['buf'][:at])
                del s['buf'][:at + 1]
                emit(sid, line.decode('utf-8', 'replace'))
        else:
            if not data:
                owner.pop(fd, None)
                continue
            s['out'] += len(data)
            s['tail'] = (s['tail'] + data)[-2000:]
            if s['out'] > s['cap']:
                end(sid, 'output_cap: the tools wrote more than %d bytes outside print()' % s['cap'])
