#!/usr/bin/env node
// @ts-check
// The extension's icon (package.json `icon`: the Marketplace and Open VSX want a PNG of at least
// 128×128, never an SVG) rendered from its source, media/icon.svg, into media/icon.png (a build output,
// git-ignored). `npm run package` calls it before vsce; `node scripts/renderIcon.mjs` alone works too.
// The renderer is resvg (@resvg/resvg-js, a devDependency): a prebuilt Node-API binary per platform that
// npm installs from the registry as an optional package, with no install script and no download.
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The icon's side in pixels: the size both galleries ask for. */
export const ICON_SIZE = 128;

/**
 * Renders media/icon.svg to media/icon.png at ICON_SIZE × ICON_SIZE; returns the PNG's path.
 * @returns {string}
 */
export function renderIcon() {
  const from = path.join(root, 'media', 'icon.svg');
  const to = path.join(root, 'media', 'icon.png');
  /** @type {typeof import('@resvg/resvg-js')} */
  let resvg;
  try {
    resvg = createRequire(import.meta.url)('@resvg/resvg-js');
  } catch (e) {
    throw new Error(`@resvg/resvg-js, which renders the icon, does not load here (${/** @type {Error} */ (e).message.split('\n')[0]}). Fix: npm ci`);
  }
  const image = new resvg.Resvg(fs.readFileSync(from, 'utf8'), { fitTo: { mode: 'width', value: ICON_SIZE } }).render();
  if (image.width !== ICON_SIZE || image.height !== ICON_SIZE)
    throw new Error(`media/icon.svg rendered to ${image.width}×${image.height}, not ${ICON_SIZE}×${ICON_SIZE}. Fix: a square viewBox`);
  fs.writeFileSync(to, image.asPng());
  return to;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    console.log(path.relative(root, renderIcon()));
  } catch (e) {
    console.error(/** @type {Error} */ (e).message);
    process.exit(1);
  }
}
