#!/usr/bin/env node
// @ts-check
// Resolves every relative import of src/ to the layer it lands in (scripts/layers.mjs) and fails on an
// import that goes up or sideways (and against a folder's inner order: INNER_LAYERS), and on any import circle between files of src/ (type imports
// included; scripts/importCycles.mjs). Prints the folder-level graph with --graph.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findCycles } from './importCycles.mjs';
import { innerViolation, layerOf, mayImport } from './layers.mjs';

const SRC = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'src');

/** @param {string} dir @returns {string[]} */
function walk(dir) {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
}

const bad = [];
/** @type {Map<string, number>} */
const graph = new Map();
/** @type {Map<string, string[]>} src-relative file → the src files it imports */
const files = new Map();
for (const file of walk(SRC)) {
  const rel = path.relative(SRC, file).split(path.sep).join('/');
  /** @type {string[]} */
  const imports = [];
  files.set(rel, imports);
  const from = layerOf(path.relative(SRC, file).split(path.sep).join('/'));
  if (!from) {
    bad.push(`${path.relative(SRC, file)}: in no layer (add its folder to scripts/layers.mjs)`);
    continue;
  }
  const text = fs.readFileSync(file, 'utf8');
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
    const target = path
      .relative(SRC, path.resolve(path.dirname(file), m[1] ?? ''))
      .split(path.sep)
      .join('/');
    if (target.startsWith('..')) continue; // package.json and the like, outside src
    const resolved = target.endsWith('.ts') || target.endsWith('.json') ? target : `${target}.ts`;
    if (resolved.endsWith('.ts')) imports.push(resolved);
    const inner = innerViolation(rel, resolved);
    if (inner) bad.push(`${path.relative(SRC, file)}: imports ${m[1]} (${inner} in scripts/layers.mjs)`);
    const to = layerOf(resolved);
    if (!to || to === from) continue;
    graph.set(`${from} → ${to}`, (graph.get(`${from} → ${to}`) ?? 0) + 1);
    if (!mayImport(from, to)) bad.push(`${path.relative(SRC, file)}: imports ${m[1]} (${from} → ${to}, against the layer order in scripts/layers.mjs)`);
  }
}
for (const cycle of findCycles(files)) bad.push(`import circle: ${cycle.join(' ⇄ ')} (type imports count: move the shared part to a module both can import)`);
if (process.argv.includes('--graph'))
  process.stdout.write(
    `${[...graph]
      .sort()
      .map(([k, n]) => `${k} (${n})`)
      .join('\n')}\n`,
  );
if (bad.length > 0) {
  process.stderr.write(`checkLayers: ${bad.length} import(s) against the layers or in a circle:\n${bad.map((b) => `  ${b}`).join('\n')}\n`);
  process.exit(1);
}
