// @ts-check
// The layers of src/, lowest first: a file may import only from its own folder's layer or a lower one
// (never sideways into a sibling of the same rank, never up). Read by eslint.config.mjs, which turns it
// into no-restricted-imports rules, and by scripts/checkLayers.mjs, which resolves every import of
// src/ and fails on an edge that goes up (npm run lint runs both).
/** @type {readonly (readonly string[])[]} */
export const LAYERS = [
  ['shared'],
  ['rl'], // rl/*.ts: the random streams, the backend's health check
  ['rl/algo'],
  ['rl/sandbox', 'rl/tasks'],
  ['rl/envs'],
  ['rl/policies'],
  ['rl/rollout'],
  ['rl/train'],
  ['store'],
  ['importers', 'exporters'],
  ['worker', 'backend', 'cli'],
  ['reference'], // the generated docs/reference pages: read every table and usage below
];

/**
 * Folders with an order of their own inside, lowest first ('.' = the folder's own files): to the rest of
 * src/ each is part of its layer, but within it a file may import only from its own sub-layer or a lower
 * one. The language model: its compute and file formats (models/: the tfjs decoder, the wasm engine,
 * safetensors, GGUF, the family specs, the memory plan) know nothing of the policy; the policy, its
 * tokenizer, sampler, constraint, chat format and checkpoint (.) build on them; another engine that
 * samples beside the trainer (rolloutEngines/: llama.cpp) builds on both.
 * @type {Readonly<Record<string, readonly string[]>>}
 */
export const INNER_LAYERS = { 'rl/policies/lm': ['models', '.', 'rolloutEngines'] };

/**
 * Why an import from `from` to `to` (paths relative to src/) goes against an inner order, or undefined.
 * @param {string} from
 * @param {string} to
 */
export function innerViolation(from, to) {
  for (const [folder, order] of Object.entries(INNER_LAYERS)) {
    if (!from.startsWith(`${folder}/`) || !to.startsWith(`${folder}/`)) continue;
    /** @param {string} rel */
    const sub = (rel) => {
      const first = rel.slice(folder.length + 1).split('/')[0] ?? '';
      return order.includes(first) ? first : '.';
    };
    const a = order.indexOf(sub(from));
    const b = order.indexOf(sub(to));
    if (b > a) return `${folder}: ${sub(from)} → ${sub(to)}, against its inner order ${order.join(' < ')}`;
  }
  return undefined;
}

/** The VS Code side is a tower of its own on shared/: it never loads the engine or the store. */
export const HOST_LAYERS = [['host'], ['extension.ts']];

/**
 * The layer folder of a path relative to src/ ("rl/policies/lm/x.ts" → "rl/policies"), or undefined
 * for a file outside every layer.
 * @param {string} rel
 */
export function layerOf(rel) {
  const parts = rel.split('/');
  const candidates = [...LAYERS.flat(), ...HOST_LAYERS.flat()].sort((a, b) => b.length - a.length);
  for (const c of candidates) {
    if (rel === c || rel.startsWith(`${c}/`)) {
      // rl itself holds only its root files: rl/x.ts is layer "rl", rl/sub/... belongs to rl/sub
      if (c === 'rl' && parts.length > 2) continue;
      return c;
    }
  }
  return undefined;
}

/**
 * Rank of a layer folder (0 = lowest) in its tower, and the tower.
 * @param {string} layer
 */
export function rankOf(layer) {
  const i = LAYERS.findIndex((l) => l.includes(layer));
  if (i >= 0) return { tower: 'engine', rank: i };
  const h = HOST_LAYERS.findIndex((l) => l.includes(layer));
  return { tower: 'host', rank: h };
}

/**
 * Whether a file in layer `from` may import from layer `to`.
 * @param {string} from
 * @param {string} to
 */
export function mayImport(from, to) {
  if (from === to || to === 'shared') return true;
  const a = rankOf(from);
  const b = rankOf(to);
  if (a.tower !== b.tower) return false;
  return b.rank < a.rank;
}
