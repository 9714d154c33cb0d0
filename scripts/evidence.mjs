#!/usr/bin/env node
// @ts-check
// `npm run evidence`: every learning or speed figure that docs/evidence/claims.json lists is re-derived
// from the compact evidence committed beside it (run records with per-task results, the configs, the
// code commit and the summary an experiment wrote; never a SQLite store) and compared with the text the
// README, the CHANGELOG or a page under docs/ quotes. A claim names the file that quotes it, the exact
// text, the evidence file, and how the text is made from it: a template whose {0}, {1}, … are values
// read at paths in the evidence (dot-separated keys; a negative number counts from an array's end),
// each in a format (pct1: 76.0, points1: +33.5, interval1: −0.7, int: 86, fixed1: 1.2, fixed2: 1.23,
// fixed3: 0.040, signed3: +0.040, interval3: −0.007, ratio2: 1.87×; a line break in the quoting document
// counts as a space). It fails when
// a rendered text differs from the quoted one, the file no longer quotes it, or the evidence is
// missing — so a figure cannot drift from what was measured.
// Usage: node scripts/evidence.mjs [--claims FILE]
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { arg } from './agentRl.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const claimsFile = path.resolve(root, arg('--claims', path.join('docs', 'evidence', 'claims.json')));

/** @typedef {{ path: string; format: string; scale?: number }} Value */
/** @typedef {{ file: string; text: string; evidence: string; template: string; values: Value[] }} Claim */

/** The value at a dot path; a negative index counts from an array's end. @param {unknown} doc @param {string} at */
export function valueAt(doc, at) {
  /** @type {unknown} */
  let v = doc;
  for (const key of at.split('.')) {
    if (Array.isArray(v) && /^-?\d+$/.test(key)) {
      const i = Number(key);
      v = v[i < 0 ? v.length + i : i];
    } else if (v !== null && typeof v === 'object') v = /** @type {Record<string, unknown>} */ (v)[key];
    else v = undefined;
    if (v === undefined) throw new Error(`no value at ${at} (missing at "${key}")`);
  }
  return v;
}

/** A number in a claim's format. @param {unknown} v @param {string} format */
export function formatValue(v, format) {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`not a finite number: ${JSON.stringify(v)}`);
  switch (format) {
    case 'pct1':
      return (100 * v).toFixed(1);
    case 'points1':
      return `${v >= 0 ? '+' : '−'}${Math.abs(100 * v).toFixed(1)}`;
    case 'int':
      return Math.round(v).toLocaleString('en');
    case 'fixed1':
      return v.toFixed(1);
    case 'fixed2':
      return v.toFixed(2);
    case 'fixed3':
      return v.toFixed(3);
    case 'signed3':
      return `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(3)}`;
    case 'interval3':
      // an interval's end as the tables write it: a minus sign, no plus
      return `${v < 0 ? '−' : ''}${Math.abs(v).toFixed(3)}`;
    case 'interval1':
      return `${v < 0 ? '−' : ''}${Math.abs(100 * v).toFixed(1)}`;
    case 'ratio2':
      return `${v.toFixed(2)}×`;
    default:
      throw new Error(`unknown format ${format}`);
  }
}

/** Text with every run of whitespace one space: a quoted figure may wrap across lines of a document. @param {string} t */
const oneLine = (t) => t.replace(/\s+/g, ' ');

/** The text a claim's evidence gives. @param {Claim} c */
export function render(c) {
  const doc = JSON.parse(fs.readFileSync(path.resolve(root, c.evidence), 'utf8'));
  return c.template.replace(/\{(\d+)\}/g, (_, i) => {
    const spec = c.values[Number(i)];
    if (!spec) throw new Error(`the template names {${i}}, but there are ${c.values.length} values`);
    const raw = valueAt(doc, spec.path);
    return formatValue(typeof raw === 'number' && spec.scale !== undefined ? raw * spec.scale : raw, spec.format);
  });
}

function main() {
  /** @type {Claim[]} */
  const claims = JSON.parse(fs.readFileSync(claimsFile, 'utf8'));
  const problems = [];
  for (const [i, c] of claims.entries()) {
    const where = `claim ${i + 1} (${c.file}: ${JSON.stringify(c.text)})`;
    try {
      const quoted = fs.readFileSync(path.resolve(root, c.file), 'utf8');
      const derived = render(c);
      if (derived !== c.text) problems.push(`${where}: the evidence ${c.evidence} gives ${JSON.stringify(derived)}`);
      else if (!oneLine(quoted).includes(oneLine(c.text))) problems.push(`${where}: ${c.file} no longer quotes it (update the claim with the text)`);
    } catch (e) {
      problems.push(`${where}: ${/** @type {Error} */ (e).message}`);
    }
  }
  process.stdout.write(`${claims.length - problems.length} of ${claims.length} quoted figures re-derived from their evidence\n`);
  for (const p of problems) process.stdout.write(`  ${p}\n`);
  process.exit(problems.length === 0 ? 0 : 1);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
