# The warm pool's server (src/rl/sandbox/warmPool.ts): argv[1] = the folder the work directories go in.
# It reads one JSON request per line on stdin ({id, code, cfg, stdin?, files?, fetch?, timeoutMs,
# outputCap, tailBytes}), forks a fresh limited child per execution in a new work directory, streams
# its output through pipes with the output cap and the wall-clock timeout enforced here, sweeps every
# process the child left, and answers one JSON line on stdout. It is a child subreaper, so orphans of
# the code come back to it to be killed. common.py and confine.py are put in front of this file by
# scripts/buildPython.mjs: json, os, signal, sys, apply_limits, scrub_env, prepare, run_user_code,
# flush, children_of, kill_all and confine come from there.
import ctypes, select, time

def rmtree(path):
    for root, dirs, files in os.walk(path, topdown=False):
        for name in files:
            try:
                os.unlink(os.path.join(root, name))
            except OSError:
                pass
        for name in dirs:
            p = os.path.join(root, name)
            try:
                os.rmdir(p)
            except OSError:
                try:
                    os.unlink(p)
                except OSError:
                    pass
    try:
        os.rmdir(path)
    except OSError:
        pass

counter = [0]

try:
    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
except Exception:
    pass

def uid_pids(uid):
    pids = []
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        try:
            with open('/proc/%s/status' % d) as f:
                for line in f:
                    if line.startswith('Uid:'):
                        if int(line.split()[1]) == uid:
                            pids.append(int(d))
                        break
        except OSError:
            pass
    return pids

def has_children():
    # As a subreaper every survivor of the child's tree is (or descends from) a child of ours.
    kids = children_of(os.getpid())
    return kids is None or kids != []

def sweep(pid, uid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    if uid and os.getuid() == 0 and has_children():
        for _ in range(50):
            left = [p for p in uid_pids(uid) if p != os.getpid()]
            if not left:
                break
            kill_all(left)
            time.sleep(0.002)
    # Executions run one at a time, so once the child is reaped every child of ours is a process the
    # code left behind (one that left the child's group with setsid and whose parent exited came back
    # to us): its whole tree is stopped (so nothing forks while we look), then killed, until none is
    # left, at every level and without a uid of its own.
    deadline = time.monotonic() + 2.0
    while True:
        reap_all()
        kids = children_of(os.getpid())
        if not kids or time.monotonic() > deadline:
            break
        stopped, todo = set(), list(kids)
        while todo:
            p = todo.pop()
            if p in stopped:
                continue
            stopped.add(p)
            try:
                os.kill(p, signal.SIGSTOP)
            except OSError:
                continue
            todo.extend(children_of(p) or [])
        kill_all(stopped)
        time.sleep(0.001)

def reap_all():
    while True:  # the child, and orphans reparented to us
        try:
            got, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if got == 0:
            return

def stdin_file(text):
    # The code's stdin: an anonymous in-memory file (no size limit of a pipe, nothing in the work
    # directory); where there is no memfd_create (macOS), an unlinked temporary file.
    if text is None:
        return None
    if hasattr(os, 'memfd_create'):
        fd = os.memfd_create('stdin')
    else:
        import tempfile
        fd = os.dup(tempfile.TemporaryFile().fileno())
    data = text.encode('utf-8', 'replace')
    while data:
        data = data[os.write(fd, data):]
    os.lseek(fd, 0, 0)
    return fd

def put_files(work, files, uid):
    # Relative paths inside the work directory only (checked by the caller too); owned by the code's uid.
    import base64
    for name, content in files.items():
        path = os.path.normpath(os.path.join(work, name))
        if not path.startswith(work + os.sep):
            continue
        parent = os.path.dirname(path)
        os.makedirs(parent, exist_ok=True)
        with open(path, 'wb') as f:
            f.write(base64.b64decode(content))
        if uid and os.getuid() == 0:
            p = path
            while p != work:
                os.chown(p, uid, uid)
                p = os.path.dirname(p)

def fetch_files(work, names, cap):
    # After the code is gone: regular files under the work directory only, never through a symlink
    # (the code could point one at a file of the server's), at most cap bytes in all.
    import base64
    out, total = {}, 0
    real_work = os.path.realpath(work)
    for name in names:
        path = os.path.join(work, name)
        if not os.path.realpath(path).startswith(real_work + os.sep):
            continue
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            import stat
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                continue
            data = os.read(fd, cap - total + 1)
        finally:
            os.close(fd)
        if total + len(data) > cap:
            break
        total += len(data)
        out[name] = base64.b64encode(data).decode('ascii')
    return out

def compile_error(req, e):
    import traceback
    return {'id': req['id'], 'stdout': '', 'stderr': ''.join(traceback.format_exception_only(type(e), e))[-req['tailBytes']:],
            'exitCode': 1, 'signal': None, 'timedOut': False, 'outputCapped': False, 'outputBytes': 0, 'durationMs': 0.0}

def execute(req, base):
    cfg = req['cfg']
    # Everything that allocates happens here, before the fork: in a child every first touch of
    # memory is a copy-on-write fault, which is what makes a fork expensive on virtual machines.
    try:
        code_obj = prepare(req['code'])
    except (SyntaxError, ValueError) as e:
        return compile_error(req, e)
    counter[0] += 1
    work = os.path.join(base, 'x%d' % counter[0])
    os.mkdir(work, 0o700)
    put_files(work, req.get('files') or {}, cfg.get('uid'))
    os.environ['HOME'] = work
    os.environ['TMPDIR'] = work
    stdin_fd = stdin_file(req.get('stdin'))
    sys.stdout.flush()
    sys.stderr.flush()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            null = os.open('/dev/null', os.O_RDONLY)
            os.dup2(null if stdin_fd is None else stdin_fd, 0)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            # Every fd above 2 was opened by this server, lowest number first: none is above these.
            os.closerange(3, max(out_r, out_w, err_r, err_w, null, PROTOCOL_FD, stdin_fd or 0) + 1)
            apply_limits(cfg, work)
            if cfg.get('confine'):
                confine(work)
            run_user_code(code_obj)
            os._exit(0)
        except SystemExit as e:
            flush()
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            os._exit(code)
        except BaseException:
            try:
                import traceback
                traceback.print_exc()
                flush()
            finally:
                os._exit(1)
    os.close(out_w)
    os.close(err_w)
    if stdin_fd is not None:
        os.close(stdin_fd)
    cap, tail = req['outputCap'], req['tailBytes']
    bufs = {out_r: bytearray(), err_r: bytearray()}
    total = 0
    timed_out = capped = False
    deadline = start + req['timeoutMs'] / 1000.0
    open_fds = [out_r, err_r]
    while open_fds:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select(open_fds, [], [], left)
        for fd in ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                open_fds.remove(fd)
                continue
            total += len(chunk)
            b = bufs[fd]
            b += chunk
            if len(b) > tail:
                del b[:len(b) - tail]
        if total > cap:
            capped = True
            break
    if timed_out or capped:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    _, status = os.waitpid(pid, 0)
    duration = (time.monotonic() - start) * 1000.0
    sweep(pid, cfg.get('uid'))
    os.close(out_r)
    os.close(err_r)
    fetched = fetch_files(work, req.get('fetch') or [], cap)
    rmtree(work)
    exit_code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    res = {'id': req['id'], 'stdout': bufs[out_r].decode('utf-8', 'replace'), 'stderr': bufs[err_r].decode('utf-8', 'replace'),
           'exitCode': exit_code, 'signal': sig, 'timedOut': timed_out, 'outputCapped': capped,
           'outputBytes': total, 'durationMs': duration}
    if fetched:
        res['files'] = fetched
    return res

PROTOCOL_FD = os.dup(1)

def main():
    base = sys.argv[1]
    out = os.fdopen(PROTOCOL_FD, 'w')
    devnull = os.open('/dev/null', os.O_WRONLY)
    os.dup2(devnull, 1)  # stray prints can never corrupt the protocol
    os.close(devnull)
    # sys.stdout/sys.stderr wrap fds 1 and 2, which a child points at its pipes: children reuse them.
    sys.stdout.reconfigure(errors='replace')
    sys.stderr.reconfigure(errors='replace')
    scrub_env(base)
    out.write(json.dumps({'ready': True, 'pid': os.getpid()}) + '\n')
    out.flush()
    for line in sys.stdin:
        req = json.loads(line)
        try:
            res = execute(req, base)
        except Exception as e:
            res = {'id': req.get('id'), 'error': '%s: %s' % (type(e).__name__, e)}
        out.write(json.dumps(res) + '\n')
        out.flush()

main()
