#!/usr/bin/env node
// @ts-check
// `npm run docs:screenshots`: the pictures in docs/screenshots/ are the e2e suite's own captures of the
// current views (test/e2e/artifacts/, written by `npm run test:e2e` in a real VS Code), copied under the
// names the guides use. Run after the suite (the npm script runs it first); a capture the suite did not
// write this time fails the copy, naming it, so no picture in docs/ outlives the view it shows.
// Usage: node scripts/screenshots.mjs [--max-age-hours 12]
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { arg } from './agentRl.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const artifacts = path.join(root, 'test', 'e2e', 'artifacts');
const docs = path.join(root, 'docs', 'screenshots');
const maxAgeHours = Number(arg('--max-age-hours', '12'));

/** docs/screenshots/<name> ← test/e2e/artifacts/<capture>: what each picture shows. */
const SCREENSHOTS = /** @type {const} */ ([
  ['dashboard.png', 'dashboard.png', 'the Runs tree and the dashboard'],
  ['dashboard-drill.png', 'dashboard-token-drill.png', "the dashboard's mismatch drill-down"],
  ['inspector.png', 'inspector.png', 'the trajectory inspector: a traceback linked to its code line'],
  ['token-heatmap.png', 'inspector-token-heatmap.png', 'the token heat map'],
  ['worst-token.png', 'inspector-worst-token.png', 'a worst token opened in its trajectory'],
  ['compare.png', 'compare.png', 'Compare Runs'],
  ['tree-fork.png', 'tree-fork.png', 'fork lineage in the Runs tree'],
  ['replay.png', 'replay.png', 'inline replay of a failed episode'],
  ['agent-program.png', 'inspector-agent-program.png', "your own agent program's requests as turns"],
  ['killed.png', 'killed.png', 'a killed worker and a cancelled run'],
  ['untrusted.png', 'hostile-inspector.png', 'a hand-edited run: stored text shown, never run'],
  ['old-node.png', 'old-node.png', 'an agentRl.nodePath at Node 20, passed over'],
  // the themes test (issue 43): each view in the light, dark and high-contrast themes
  ['dashboard-light.png', 'dashboard-light.png', 'the dashboard in the Light Modern theme'],
  ['drill-light.png', 'drill-light.png', 'the drill-down in the Light Modern theme'],
  ['compare-light.png', 'compare-light.png', 'Compare Runs in the Light Modern theme'],
  ['inspector-light.png', 'inspector-light.png', 'the inspector and its token heat map in the Light Modern theme'],
  ['inspector-worst-light.png', 'inspector-worst-light.png', "the inspector's worst-token table in the Light Modern theme"],
  ['dashboard-dark.png', 'dashboard-dark.png', 'the dashboard in the Dark Modern theme'],
  ['drill-dark.png', 'drill-dark.png', 'the drill-down in the Dark Modern theme'],
  ['compare-dark.png', 'compare-dark.png', 'Compare Runs in the Dark Modern theme'],
  ['inspector-dark.png', 'inspector-dark.png', 'the inspector and its token heat map in the Dark Modern theme'],
  ['inspector-worst-dark.png', 'inspector-worst-dark.png', "the inspector's worst-token table in the Dark Modern theme"],
  ['dashboard-hc.png', 'dashboard-hc.png', 'the dashboard in the Dark High Contrast theme'],
  ['drill-hc.png', 'drill-hc.png', 'the drill-down in the Dark High Contrast theme'],
  ['compare-hc.png', 'compare-hc.png', 'Compare Runs in the Dark High Contrast theme'],
  ['inspector-hc.png', 'inspector-hc.png', 'the inspector and its token heat map in the Dark High Contrast theme'],
  ['inspector-worst-hc.png', 'inspector-worst-hc.png', "the inspector's worst-token table in the Dark High Contrast theme"],
  // issue 52: a run with a severe finding, its tree badge beside the dashboard's Health section, in each theme
  ['health-light.png', 'health-light.png', "the tree's health badge and the dashboard's Health section in the Light Modern theme"],
  ['health-dark.png', 'health-dark.png', "the tree's health badge and the dashboard's Health section in the Dark Modern theme"],
  ['health-hc.png', 'health-hc.png', "the tree's health badge and the dashboard's Health section in the Dark High Contrast theme"],
  ['walkthrough-open.png', 'walkthrough-0-open.png', 'the Get Started walkthrough'],
  ['walkthrough-dashboard.png', 'walkthrough-2-dashboard.png', "the walkthrough's dashboard step"],
  ['walkthrough-replay.png', 'walkthrough-3-replay.png', "the walkthrough's replay step"],
  ['walkthrough-done.png', 'walkthrough-5-done.png', 'the walkthrough, every step checked'],
]);

/** @type {string[]} */
const stale = [];
for (const [, capture] of SCREENSHOTS) {
  const from = path.join(artifacts, capture);
  if (!fs.existsSync(from)) stale.push(`${capture}: missing`);
  else if (Date.now() - fs.statSync(from).mtimeMs > maxAgeHours * 3_600_000)
    stale.push(`${capture}: ${((Date.now() - fs.statSync(from).mtimeMs) / 3_600_000).toFixed(1)} h old`);
}
if (stale.length > 0) {
  process.stderr.write(
    `docs:screenshots: captures not written by a recent e2e run (--max-age-hours ${maxAgeHours}):\n  ${stale.join('\n  ')}\nFix: npm run test:e2e (it writes test/e2e/artifacts/), then this again\n`,
  );
  process.exit(1);
}
fs.mkdirSync(docs, { recursive: true });
for (const [name, capture] of SCREENSHOTS) fs.copyFileSync(path.join(artifacts, capture), path.join(docs, name));
process.stdout.write(`docs/screenshots/: ${SCREENSHOTS.length} pictures copied from the e2e suite's captures\n`);
