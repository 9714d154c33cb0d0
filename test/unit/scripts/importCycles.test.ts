// The import-circle finder npm run lint runs over src/ (scripts/importCycles.mjs, called by
// scripts/checkLayers.mjs), on small graphs whose circles are known by construction.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../../helpers/cli';

interface CyclesModule {
  readonly findCycles: (graph: ReadonlyMap<string, readonly string[]>) => string[][];
}

const load = async (): Promise<CyclesModule> => (await import(pathToFileURL(path.join(ROOT, 'scripts', 'importCycles.mjs')).href)) as CyclesModule;
const graphOf = (edges: Record<string, string[]>): Map<string, string[]> => new Map(Object.entries(edges));

describe('findCycles (the import-circle check of npm run lint)', () => {
  it('finds nothing in a graph without a circle, shared imports and leaves included', async () => {
    const { findCycles } = await load();
    // a diamond: b and c both import d, which is not a circle
    assert.deepEqual(findCycles(graphOf({ a: ['b', 'c'], b: ['d'], c: ['d', 'leaf.ts'], d: [] })), []);
  });

  it('finds a two-file circle (forkRun ⇄ runCommands was one) and a self-import', async () => {
    const { findCycles } = await load();
    const cycles = findCycles(graphOf({ 'x.ts': ['y.ts', 'z.ts'], 'y.ts': ['x.ts'], 'z.ts': ['z.ts'], 'w.ts': ['x.ts'] }));
    assert.deepEqual(cycles, [['x.ts', 'y.ts'], ['z.ts']]);
  });

  it('reports a longer loop once, with every file on it and none of the files that only lead into it', async () => {
    const { findCycles } = await load();
    const cycles = findCycles(graphOf({ e: ['a'], a: ['b'], b: ['c'], c: ['a', 'd'], d: [], f: ['g'], g: ['f'] }));
    assert.deepEqual(cycles, [
      ['a', 'b', 'c'],
      ['f', 'g'],
    ]);
  });

  it('walks a chain deeper than the call stack would allow a recursive walk', async () => {
    const { findCycles } = await load();
    const n = 50_000;
    const edges: Record<string, string[]> = {};
    for (let i = 0; i < n; i++) edges[`f${i}`] = [`f${i + 1}`];
    edges[`f${n}`] = ['f0'];
    const cycles = findCycles(graphOf(edges));
    assert.equal(cycles.length, 1);
    assert.equal(cycles[0]!.length, n + 1);
  });
});
