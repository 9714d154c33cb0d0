# Shared by the sandbox's Python programs: the launcher (launcher.py), the warm pool's server
# (server.py) and the workspace tool zygote (src/rl/envs/workspace/python/toolZygote.py).
# scripts/buildPython.mjs puts this file in front of each of them, so they run as one source passed
# to `python -I -S -c`: no import path is needed inside the sandbox.
#
# Every program applies the same limits, in the same order: rlimits (soft = hard, so the code cannot
# raise them), then, when started as root, a switch to a dedicated unprivileged uid (which makes
# RLIMIT_NPROC count and lets the parent find every process the code left behind), then a scrubbed
# environment. The limits' JSON config: {cpu, mem, nproc, fsize, nofile, uid?} (src/rl/sandbox/limits.ts).
import json, linecache, os, resource, signal, sys

def apply_limits(cfg, cwd):
    if os.getuid() == 0 and cfg.get('uid'):
        os.chown(cwd, cfg['uid'], cfg['uid'])
    for name, value in (('RLIMIT_CPU', cfg['cpu']), ('RLIMIT_AS', cfg['mem']), ('RLIMIT_NPROC', cfg['nproc']),
                        ('RLIMIT_FSIZE', cfg['fsize']), ('RLIMIT_NOFILE', cfg['nofile']), ('RLIMIT_CORE', 0)):
        resource.setrlimit(getattr(resource, name), (value, value))
    if os.getuid() == 0 and cfg.get('uid'):
        os.setgroups([])
        os.setgid(cfg['uid'])
        os.setuid(cfg['uid'])
    os.chdir(cwd)

def scrub_env(cwd):
    os.environ.clear()
    os.environ.update({'PATH': '/usr/local/bin:/usr/bin:/bin', 'LANG': 'C.UTF-8', 'HOME': cwd, 'PYTHONIOENCODING': 'utf-8', 'TMPDIR': cwd})

def prepare(code):
    # Compiled as file main.py so tracebacks give the user's own line numbers; the source goes into
    # linecache (no file I/O) so tracebacks can quote it. Raises SyntaxError/ValueError for bad code.
    linecache.cache['main.py'] = (len(code), None, code.splitlines(True), 'main.py')
    return compile(code, 'main.py', 'exec')

def run_user_code(code_obj):
    sys.argv = ['main.py']
    glb = {'__name__': '__main__', '__file__': 'main.py', '__builtins__': __builtins__}
    try:
        exec(code_obj, glb)
    except SystemExit as e:
        flush()
        raise
    except BaseException as e:
        import traceback
        tb = e.__traceback__.tb_next if e.__traceback__ is not None else None
        flush()
        traceback.print_exception(type(e), e, tb)
        flush()
        os._exit(1)
    flush()

def children_of(pid):
    # The children of every thread of pid, or None when /proc cannot say (no /proc: macOS).
    try:
        tids = os.listdir('/proc/%d/task' % pid)
    except OSError:
        return None
    kids = []
    for tid in tids:
        try:
            with open('/proc/%d/task/%s/children' % (pid, tid)) as f:
                kids.extend(int(x) for x in f.read().split())
        except OSError:
            pass
    return kids

def kill_all(pids, sig=signal.SIGKILL):
    for p in pids:
        try:
            os.kill(p, sig)
        except OSError:
            pass

def flush():
    for s in (sys.stdout, sys.stderr):
        try:
            s.flush()
        except Exception:
            pass
