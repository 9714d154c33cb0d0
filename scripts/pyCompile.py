# Part of `npm run lint` (through scripts/pyCompile.mjs): compiles every .py of the repository (src,
# examples, bench, test, scripts) as py_compile does, but in memory: no bytecode is written anywhere.
# A syntax error fails the lint, and so does a SyntaxWarning or DeprecationWarning the compiler raises
# (an invalid escape such as "\d" in a plain string, `is` with a literal).
import os
import sys
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIP = {"node_modules", "out", "dist", ".git", "__pycache__", "artifacts"}


def py_files():
    for top in ("src", "examples", "bench", "test", "scripts"):
        for folder, dirs, files in os.walk(os.path.join(ROOT, top)):
            dirs[:] = sorted(d for d in dirs if d not in SKIP)
            for name in sorted(files):
                if name.endswith(".py"):
                    yield os.path.relpath(os.path.join(folder, name), ROOT)


def main():
    names = list(py_files())
    failed = 0
    for name in names:
        with open(os.path.join(ROOT, name), "rb") as f:
            source = f.read()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", SyntaxWarning)
                warnings.simplefilter("error", DeprecationWarning)
                compile(source, name, "exec", dont_inherit=True)
        except Exception as e:
            failed += 1
            where = "%s:%d" % (name, e.lineno) if isinstance(e, SyntaxError) and e.lineno else name
            sys.stderr.write("%s: %s: %s\n" % (where, type(e).__name__, e.msg if isinstance(e, SyntaxError) else e))
    print("py_compile: %d .py files, %d failed" % (len(names), failed))
    return 1 if failed else 0


sys.exit(main())
