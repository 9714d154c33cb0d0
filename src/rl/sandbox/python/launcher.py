# The fresh-interpreter launcher (src/rl/sandbox/freshExecutor.ts): one interpreter per execution.
# argv[1] = JSON config {cpu, mem, nproc, fsize, nofile, uid?, confine?, cwd, file}: the limits, the
# work directory and the file that holds the code. It applies the limits, confines itself at the
# landlock level (confine.py), scrubs the environment and runs the code as main.py. common.py and
# confine.py are put in front of this file by scripts/buildPython.mjs: json, sys, apply_limits,
# scrub_env, prepare, run_user_code and confine come from there.
cfg = json.loads(sys.argv[1])
with open(cfg['file'], encoding='utf-8', errors='replace') as f:
    code = f.read()
apply_limits(cfg, cfg['cwd'])
if cfg.get('confine'):
    try:
        confine(cfg['cwd'])
    except OSError as e:
        sys.stderr.write('sandbox: the landlock level could not confine the code: %s\n' % e)
        sys.exit(70)
scrub_env(cfg['cwd'])
try:
    code_obj = prepare(code)
except (SyntaxError, ValueError) as e:
    import traceback
    sys.stderr.write(''.join(traceback.format_exception_only(type(e), e)))
    sys.exit(1)
run_user_code(code_obj)
