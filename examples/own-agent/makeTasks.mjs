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
// Usage: node examples/own-agent/makeTasks.mjs > examples/own-agent/tasks.jsonl
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
const lines = [];
let times = 0;
while (lines.length < 1200) {
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
  lines.push(JSON.stringify({ id: `calc-${String(lines.length).padStart(4, '0')}`, prompt: `What is ${expression}?`, answer, split, demonstration }));
}
process.stdout.write(`${lines.join('\n')}\n`);
