#!/usr/bin/env node
// @ts-check
// `npm run docs:reference`: writes the reference pages under docs/reference/ (run-config options, the
// command line, the sandbox's guarantees, the VS Code settings and commands) from the code, as
// src/reference/referencePages.ts renders them. It reads the compiled code in out/ (npm run
// compile-tests, which the npm script runs first). test/unit/docs/reference.test.ts renders the same
// pages and fails when a committed one differs. Usage: node scripts/genReference.mjs
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const built = path.join(root, 'out', 'src', 'reference', 'referencePages.js');

/** @typedef {{ file: string; sources: readonly string[]; text: string }} ReferencePage */
/** @typedef {{ referencePages: (manifest: unknown) => ReferencePage[] }} ReferenceModule */

if (!fs.existsSync(built)) {
  process.stderr.write(`genReference: ${path.relative(root, built)} is missing; run npm run compile-tests first (npm run docs:reference does)\n`);
  process.exit(2);
}
const { referencePages } = /** @type {ReferenceModule} */ (await import(pathToFileURL(built).href));
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
for (const page of referencePages(manifest)) {
  const file = path.join(root, page.file);
  const now = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
  if (now === page.text) {
    process.stdout.write(`${page.file}: up to date\n`);
    continue;
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, page.text);
  process.stdout.write(`${page.file}: written\n`);
}
