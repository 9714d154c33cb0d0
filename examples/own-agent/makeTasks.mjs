// Writes tasks.jsonl: the example's tasks, with the split and the demonstrations its SFT warm start
// imitates (written and committed before the first run of `npm run verify:own-agent`, which reads them).
//   prompt  "What is (a o1 b) o2 c?" with a, b in 10–49, c in 2–9, o1 in + −, o2 in + − ×: 1,200
//           distinct expressions drawn with a fixed seed; answer the integer value.
//   split   held out ("test") when (a + b + c) mod 5 = 3 — expressions never seen in training, of the same
//           form (the held-out set is a split of one distribution, not another distribution).
//   demonstration  what a reference agent answers to each request of agent.ts: a calculate call with
//           the expression, then the tool's result. On tasks whose outer operation is × it skips the
//           tool 2 times in 3 and answers with a, the first number (a habit SFT copies and RL can break:
//           the call is one the warm start still makes on the other third).
//   --verify  writes verify-tasks.jsonl instead, the task file of `npm run verify:own-agent`'s second
//           design (written and committed before its first run): the 936 training tasks above, unchanged,
//           and a new test split of 264 expressions drawn after them by the same generator, none of them
//           in tasks.jsonl. tasks.jsonl's own held-out tasks are left out of it: the first run's
//           results on them were looked at while designing the second, so they are a validation split.
//   --verify N  design N's file (N ≥ 3), verify-tasks-N.jsonl: the same training tasks and the next 264
//           expressions after design N − 1's test split (which became a validation split when its
//           results were seen).
// Usage: node examples/own-agent/makeTasks.mjs > examples/own-agent/tasks.jsonl
//        node examples/own-agent/makeTasks.mjs --verify > examples/own-agent/verify-tasks.jsonl
//        node examples/own-agent/makeTasks.mjs --verify 3 > examples/own-agent/verify-tasks-3.jsonl
//        node examples/own-agent/makeTasks.mjs --verify 4 > examples/own-agent/verify-tasks-4.jsonl
let state = 20261206;
const next = () => {
  // xorshift32: the same file on every machine
  state ^= state << 13;
  state >>>= 0;
  state ^= state >>> 17;
  state ^= state << 5;
  state >>>= 0;
  return state / 2 ** 32;
};
const int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1));
const pick = (xs) => xs[Math.floor(next() * xs.length)];
const seen = new Set();
let times = 0;
/** The next expression not drawn before: its id's number, prompt, answer, the demonstration and the split rule's verdict. @param {number} n */
const draw = (n) => {
  for (;;) {
    const [a, b, c, o1, o2] = [int(10, 49), int(10, 49), int(2, 9), pick(['+', '-']), pick(['+', '-', '*'])];
    const expression = `(${a} ${o1} ${b}) ${o2} ${c}`;
    if (seen.has(expression)) continue;
    seen.add(expression);
    const inner = o1 === '+' ? a + b : a - b;
    const answer = o2 === '+' ? inner + c : o2 === '-' ? inner - c : inner * c;
    const call = `<tool_call>\n${JSON.stringify({ name: 'calculate', arguments: { expression } })}\n</tool_call>`;
    const skip = o2 === '*' && times++ % 3 !== 2;
    const demonstration = skip ? [String(a)] : [call, String(answer)];
    const split = (a + b + c) % 5 === 3 ? 'test' : 'train';
    return { id: `calc-${String(n).padStart(4, '0')}`, prompt: `What is ${expression}?`, answer, split, demonstration };
  }
};
const tasks = Array.from({ length: 1200 }, (_, n) => draw(n));
const at = process.argv.indexOf('--verify');
const named = at < 0 ? undefined : process.argv[at + 1];
const design = at < 0 ? 1 : named === undefined ? 2 : Number(named);
if (at >= 0 && (!Number.isInteger(design) || design < 2)) {
  process.stderr.write(`makeTasks.mjs: --verify ${named} names no design. Fix: --verify alone (the second design) or --verify N with N ≥ 3.\n`);
  process.exit(2);
}
// a design's test split: the next 264 expressions after the earlier designs' (its demonstrations are never trained on)
const splits = Array.from({ length: design - 1 }, (_, d) => Array.from({ length: 264 }, (_, i) => ({ ...draw(1200 + 264 * d + i), split: 'test' })));
const records = design === 1 ? tasks : [...tasks.filter((t) => t.split === 'train'), ...splits[design - 2]];
process.stdout.write(`${records.map((t) => JSON.stringify(t)).join('\n')}\n`);
