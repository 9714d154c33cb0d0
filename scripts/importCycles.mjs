// @ts-check
// Import circles among the files of src/: scripts/checkLayers.mjs hands it every resolved import (type
// imports included, since a type-only circle still means two files that cannot be read apart) and
// fails on any circle it finds. Kept apart from checkLayers so a unit test can run it on a small graph.

/**
 * The import circles of a graph: each strongly connected set of files that can reach one another (two
 * or more files, or one file that imports itself), its files sorted, the circles sorted by their first
 * file. Tarjan's algorithm, iterative so that a deep import chain cannot overflow the stack.
 * @param {ReadonlyMap<string, readonly string[]>} graph file → the files it imports (a target that is
 *   not a key of the graph is a leaf)
 * @returns {string[][]}
 */
export function findCycles(graph) {
  /** @type {Map<string, number>} */
  const index = new Map();
  /** @type {Map<string, number>} */
  const low = new Map();
  /** @type {Set<string>} */
  const onStack = new Set();
  /** @type {string[]} */
  const stack = [];
  /** @type {string[][]} */
  const cycles = [];
  let next = 0;
  const edges = (/** @type {string} */ v) => graph.get(v) ?? [];
  for (const root of graph.keys()) {
    if (index.has(root)) continue;
    /** @type {{ v: string, i: number }[]} */
    const work = [{ v: root, i: 0 }];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const top = /** @type {{ v: string, i: number }} */ (work[work.length - 1]);
      const out = edges(top.v);
      if (top.i < out.length) {
        const w = /** @type {string} */ (out[top.i++]);
        if (!index.has(w)) {
          index.set(w, next);
          low.set(w, next++);
          stack.push(w);
          onStack.add(w);
          work.push({ v: w, i: 0 });
        } else if (onStack.has(w)) low.set(top.v, Math.min(/** @type {number} */ (low.get(top.v)), /** @type {number} */ (index.get(w))));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.v, Math.min(/** @type {number} */ (low.get(parent.v)), /** @type {number} */ (low.get(top.v))));
      if (low.get(top.v) !== index.get(top.v)) continue;
      /** @type {string[]} */
      const members = [];
      for (;;) {
        const w = /** @type {string} */ (stack.pop());
        onStack.delete(w);
        members.push(w);
        if (w === top.v) break;
      }
      if (members.length > 1 || edges(top.v).includes(top.v)) cycles.push(members.sort());
    }
  }
  return cycles.sort((a, b) => (a[0] ?? '').localeCompare(b[0] ?? ''));
}
