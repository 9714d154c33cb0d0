#!/usr/bin/env node
// @ts-check
// `npm run lint` runs this: scripts/pyCompile.py compiles every .py of the repository with Python 3
// (as py_compile does, writing no bytecode). Python: /usr/bin/python3, else python3 on PATH.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const python = fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const r = spawnSync(python, ['-I', '-S', '-B', path.join(root, 'scripts', 'pyCompile.py')], { cwd: root, stdio: 'inherit' });
if (r.error) {
  process.stderr.write(`pyCompile: could not run ${python} (${r.error.message}); Python 3 is needed to lint the .py files\n`);
  process.exit(1);
}
process.exit(r.status ?? 1);
