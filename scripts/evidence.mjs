#!/usr/bin/env node
// @ts-check
// `npm run evidence`: every learning or speed figure that docs/evidence/claims.json lists is re-derived
// from the compact evidence committed beside it (run records with per-task results, the configs, the
// code commit and the summary an experiment wrote, a bench's printed output; never a SQLite store) and
// compared with the text the README, the CHANGELOG or a page under docs/ quotes. A claim names the file
// that quotes it, the exact text, the evidence file, and how the text is made from it: a template whose
// {0}, {1}, … are values. A value is read from the evidence at `path` (JSON: dot-separated keys; a
// negative number counts from an array's end; `*` takes every element or value) or by `match` (text: a
// regular expression with one capture group, its first match parsed as a number, commas dropped); it may
// be less `minus` or over `per` (another path or match, one for one), then `of` "min" or "max" of
// several (with `of`, `match` takes every match), times `scale`, in a format (pct1: 76.0, points1:
// +33.5, interval1: −0.7, int: 86, fixed1: 1.2, fixed2: 1.23, fixed3: 0.040, fixed4: 0.0046, signed3: +0.040,
// interval3: −0.007, ratio2: 1.87×; a line break in the quoting document counts as a space). It fails
// when a rendered text differs from the quoted one, the file no longer quotes it, the evidence is
// missing, or a pattern does not match — so a figure cannot drift from what was measured.
// Usage: node scripts/evidence.mjs [--claims FILE]
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { arg } from './agentRl.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const claimsFile = path.resolve(root, arg('--claims', path.join('docs', 'evidence', 'claims.json')));

/** Where numbers come from: a dot path into JSON evidence, or a pattern over text evidence. @typedef {{ path?: string; match?: string }} Source */
/** @typedef {Source & { minus?: Source; per?: Source; of?: 'min' | 'max'; scale?: number; format: string }} Value */
/** @typedef {{ file: string; text: string; evidence: string; template: string; values: Value[] }} Claim */
/** An evidence file: its text, and its JSON when a value reads a path. @typedef {{ text: string; json: () => unknown }} Evidence */

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

/** Every value at a dot path whose `*` keys take each element of an array or value of an object. @param {unknown} doc @param {string} at @returns {unknown[]} */
export function valuesAt(doc, at) {
  const keys = at.split('.');
  const star = keys.indexOf('*');
  if (star < 0) return [valueAt(doc, at)];
  const base = star === 0 ? doc : valueAt(doc, keys.slice(0, star).join('.'));
  if (base === null || typeof base !== 'object') throw new Error(`no array or object at ${keys.slice(0, star).join('.') || 'the top'} for "*" in ${at}`);
  const rest = keys.slice(star + 1).join('.');
  return Object.values(base).flatMap((v) => (rest ? valuesAt(v, rest) : [v]));
}

/** The numbers a pattern's capture group finds in a text: the first match, or every match. @param {string} text @param {string} pattern @param {boolean} every */
export function matchesIn(text, pattern, every) {
  const found = [...text.matchAll(new RegExp(pattern, 'g'))];
  if (found.length === 0) throw new Error(`no match for the pattern /${pattern}/`);
  return found.slice(0, every ? found.length : 1).map((m) => {
    if (!m[1]) throw new Error(`the pattern /${pattern}/ captured nothing (it needs one capture group)`);
    const x = Number(m[1].replace(/,/g, '').replace('−', '-'));
    if (!Number.isFinite(x)) throw new Error(`the pattern /${pattern}/ captured ${JSON.stringify(m[1])}, not a number`);
    return x;
  });
}

/** A finite number, or an error saying what it was. @param {unknown} v */
function finite(v) {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`not a finite number: ${JSON.stringify(v)}`);
  return v;
}

/** The numbers a source gives. @param {Source} s @param {Evidence} e @param {boolean} every */
function numbers(s, e, every) {
  if (s.match !== undefined) return matchesIn(e.text, s.match, every);
  if (s.path !== undefined) return valuesAt(e.json(), s.path).map(finite);
  throw new Error('a value names neither a path nor a match');
}

/** The one number a claim's value gives. @param {Value} spec @param {Evidence} e */
export function valueOf(spec, e) {
  const every = spec.of !== undefined;
  let xs = numbers(spec, e, every);
  /** @param {Source | undefined} other @param {(a: number, b: number) => number} f */
  const combine = (other, f) => {
    if (!other) return;
    const ys = numbers(other, e, every);
    if (ys.length !== xs.length) throw new Error(`${xs.length} values against ${ys.length} to combine`);
    xs = xs.map((x, i) => f(x, ys[i] ?? NaN));
  };
  combine(spec.minus, (a, b) => a - b);
  combine(spec.per, (a, b) => a / b);
  if (spec.of === 'min' || spec.of === 'max') xs = [spec.of === 'min' ? Math.min(...xs) : Math.max(...xs)];
  else if (spec.of !== undefined) throw new Error(`unknown "of": ${JSON.stringify(spec.of)}`);
  const [x] = xs;
  if (xs.length !== 1 || x === undefined) throw new Error(`${spec.path ?? spec.match} gives ${xs.length} values: take their min or max with "of"`);
  return spec.scale === undefined ? x : x * spec.scale;
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
    case 'fixed4':
      return v.toFixed(4);
    case 'signed3':
      return `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(3)}`;
    case 'interval3':
      // an interval's end as the tables write it: a minus sign, no plus
      return `${v < 0 ? '−' : ''}${Math.abs(v).toFixed(3)}`;
    case 'interval1':
      return `${v < 0 ? '−' : ''}${Math.abs(100 * v).toFixed(1)}`;
    case 'ratio2':
      return `${v.toFixed(2)}×`;
    case 'exp1':
      // 9.3e-8, a mean log-prob gap quoted to two figures
      return v.toExponential(1).replace('e+', 'e');
    case 'exp2':
      // 3.80e-3, as the benches print small log-prob gaps
      return v.toExponential(2).replace('e+', 'e');
    default:
      throw new Error(`unknown format ${format}`);
  }
}

/** Text with every run of whitespace one space: a quoted figure may wrap across lines of a document. @param {string} t */
const oneLine = (t) => t.replace(/\s+/g, ' ');

/** The text a claim's evidence gives. @param {Claim} c */
export function render(c) {
  const text = fs.readFileSync(path.resolve(root, c.evidence), 'utf8');
  /** @type {{ doc: unknown } | undefined} */
  let parsed;
  /** @type {Evidence} */
  const e = { text, json: () => (parsed ??= { doc: JSON.parse(text) }).doc };
  return c.template.replace(/\{(\d+)\}/g, (_, i) => {
    const spec = c.values[Number(i)];
    if (!spec) throw new Error(`the template names {${i}}, but there are ${c.values.length} values`);
    return formatValue(valueOf(spec, e), spec.format);
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
