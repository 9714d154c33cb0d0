// Your agent, unchanged: a loop around the official OpenAI client with one function tool. Nothing here
// knows about the workbench: it reads OPENAI_BASE_URL and OPENAI_API_KEY like any OpenAI program (the
// workbench points them at the policy it trains), takes its task as JSON on stdin, and prints its
// reward as its last line: {"reward": 1} when its final answer is the task's answer.
// Run it alone against any OpenAI-compatible server: echo '{"prompt":"What is 6*7?","answer":42}' | node agent.ts
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';

interface Task {
  readonly prompt: string;
  /** The task file's answer (the workbench passes the record's fields: `groundTruth`). */
  readonly groundTruth?: unknown;
  readonly answer?: unknown;
}

const tools: ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'calculate',
      description: 'Evaluate an arithmetic expression with + - * / and parentheses, e.g. "(12 + 3) * 4".',
      parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
    },
  },
];

/** + - * / and parentheses over decimal numbers; never eval (the expression is model output). */
function calculate(expression: string): number {
  const s = expression.replace(/\s+/g, '');
  let i = 0;
  const number = (): number => {
    if (s[i] === '(') {
      i++;
      const v = sum();
      if (s[i++] !== ')') throw new Error('missing )');
      return v;
    }
    if (s[i] === '-') {
      i++;
      return -number();
    }
    const m = /^\d+(\.\d+)?/.exec(s.slice(i));
    if (!m) throw new Error(`a number expected at ${i}`);
    i += m[0].length;
    return Number(m[0]);
  };
  const product = (): number => {
    let v = number();
    while (s[i] === '*' || s[i] === '/') v = s[i++] === '*' ? v * number() : v / number();
    return v;
  };
  const sum = (): number => {
    let v = product();
    while (s[i] === '+' || s[i] === '-') v = s[i++] === '+' ? v + product() : v - product();
    return v;
  };
  const v = sum();
  if (i !== s.length) throw new Error(`unexpected "${s[i]}" at ${i}`);
  return v;
}

function run(call: { name: string; arguments: string }): string {
  try {
    const args = JSON.parse(call.arguments) as { expression?: unknown };
    if (call.name !== 'calculate' || typeof args.expression !== 'string') return 'error: call calculate with {"expression": "..."}';
    return String(calculate(args.expression));
  } catch (e) {
    return `error: ${(e as Error).message}`;
  }
}

async function main(): Promise<void> {
  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  const task = JSON.parse(input) as Task;
  const client = new OpenAI({ maxRetries: 0 });
  const messages: ChatCompletionMessageParam[] = [
    { role: 'system', content: 'You are a careful calculator. Use the calculate tool, then reply with the number alone.' },
    { role: 'user', content: task.prompt },
  ];
  let answer = '';
  for (let turn = 0; turn < 4; turn++) {
    const r = await client.chat.completions.create({ model: process.env.OPENAI_MODEL ?? 'gpt-4o-mini', messages, tools, max_tokens: 200 });
    const m = r.choices[0]!.message;
    messages.push(m);
    const calls = (m.tool_calls ?? []).filter((c) => c.type === 'function');
    if (calls.length === 0) {
      answer = (m.content ?? '').trim();
      break;
    }
    for (const c of calls) messages.push({ role: 'tool', tool_call_id: c.id, content: run(c.function) });
  }
  const expected = Number(task.groundTruth ?? task.answer);
  const reward = answer !== '' && Number(answer) === expected ? 1 : 0;
  console.log(JSON.stringify({ reward, answer: answer.slice(0, 200), turns: messages.length }));
}

void main();
