# The fresh-interpreter launcher (src/rl/sandbox/freshExecutor.ts): one process per execution.
# argv[1] = JSON config {cpu, mem, nproc, fsize, nofile, uid?, confine?, roots?, cwd} and either
# `file` (the file that holds Python code, run as main.py) or `argv` (a command: a compiler, an
# interpreter of another language or a compiled program, with `env`, extra environment variables).
# It applies the limits, confines itself at the landlock level (confine.py, with `roots`: a
# toolchain's folders outside the system ones, readable), scrubs the environment, then runs the code
# or replaces itself with the command. common.py and confine.py are put in front of this file by
# scripts/buildPython.mjs: json, os, sys, apply_limits, scrub_env, prepare, run_user_code and confine
# come from there.
cfg = json.loads(sys.argv[1])
code = None
if 'file' in cfg:
    with open(cfg['file'], encoding='utf-8', errors='replace') as f:
        code = f.read()
apply_limits(cfg, cfg['cwd'])
if cfg.get('confine'):
    try:
        confine(cfg['cwd'], cfg.get('roots') or ())
    except OSError as e:
        sys.stderr.write('sandbox: the landlock level could not confine the code: %s\n' % e)
        sys.exit(70)
scrub_env(cfg['cwd'])
if code is None:
    os.environ.pop('PYTHONIOENCODING', None)
    os.environ.update(cfg.get('env') or {})
    try:
        os.execve(cfg['argv'][0], cfg['argv'], os.environ)
    except OSError as e:
        sys.stderr.write('sandbox: cannot run %s: %s\n' % (cfg['argv'][0], e.strerror))
        sys.exit(127)
try:
    code_obj = prepare(code)
except (SyntaxError, ValueError) as e:
    import traceback
    sys.stderr.write(''.join(traceback.format_exception_only(type(e), e)))
    sys.exit(1)
run_user_code(code_obj)
