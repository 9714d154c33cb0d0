// Reading the judge's answer strictly (issue 51): the chat-completions body as JSON, its first choice's
// message content a JSON object {"scores": {id: number}} with exactly the group's ids, each a finite
// number in [0, 1]. Anything else is a JudgeAnswerError naming what was wrong — the group's error, never
// a score of 0 in its place. The content may sit in one ```json fence (small local models add one); no
// other text around it is read.

/** Why an answer was not a set of scores: said in the group's error and stored with its exchange. */
export class JudgeAnswerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JudgeAnswerError';
  }
}

/** An answer read: the scores by id and the tokens the endpoint says it used (0 when it does not say). */
export interface JudgeScores {
  readonly scores: ReadonlyMap<string, number>;
  readonly tokens: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** At most this much of a bad answer is quoted in the error (the whole is stored with the exchange). */
const QUOTE = 120;
const quote = (s: string): string => JSON.stringify(s.length > QUOTE ? `${s.slice(0, QUOTE)}…` : s);

/** The message content of a chat-completions body, and its usage.total_tokens. */
export function answerContent(body: string): { content: string; tokens: number } {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new JudgeAnswerError(`the endpoint's answer is not JSON: ${quote(body)}`);
  }
  const choices = isObject(json) ? json.choices : undefined;
  const message = Array.isArray(choices) && isObject(choices[0]) ? choices[0].message : undefined;
  const content = isObject(message) ? message.content : undefined;
  if (typeof content !== 'string') throw new JudgeAnswerError('the answer has no choices[0].message.content string (not an OpenAI chat-completions answer)');
  const usage = isObject(json) ? json.usage : undefined;
  const total = isObject(usage) ? usage.total_tokens : undefined;
  return { content, tokens: typeof total === 'number' && Number.isFinite(total) && total >= 0 ? total : 0 };
}

/** The scores in a message's content, checked against the group's ids. */
export function parseScores(content: string, ids: readonly string[]): Map<string, number> {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/.exec(content);
  const text = fenced ? fenced[1]! : content;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new JudgeAnswerError(`the judge's message is not a JSON object: ${quote(content)}`);
  }
  if (!isObject(json)) throw new JudgeAnswerError(`the judge's message is JSON but not an object: ${quote(content)}`);
  const extra = Object.keys(json).filter((k) => k !== 'scores');
  if (extra.length > 0) throw new JudgeAnswerError(`the judge's object has keys other than "scores": ${extra.map((k) => quote(k)).join(', ')}`);
  const scores = json.scores;
  if (!isObject(scores)) throw new JudgeAnswerError('the judge\'s object has no "scores" object');
  const unknown = Object.keys(scores).filter((k) => !ids.includes(k));
  if (unknown.length > 0)
    throw new JudgeAnswerError(`the judge scored ids the group does not have: ${unknown.map((k) => quote(k)).join(', ')} (the ids: ${ids.join(', ')})`);
  const missing = ids.filter((id) => !Object.hasOwn(scores, id));
  if (missing.length > 0) throw new JudgeAnswerError(`the judge left out ${missing.join(', ')} (every id must have a score)`);
  const out = new Map<string, number>();
  for (const id of ids) {
    const v = scores[id];
    if (typeof v !== 'number' || !Number.isFinite(v))
      throw new JudgeAnswerError(`the score of ${id} is not a finite number: ${quote(JSON.stringify(v) ?? String(v))}`);
    if (v < 0 || v > 1) throw new JudgeAnswerError(`the score of ${id} is ${v}, outside [0, 1]`);
    out.set(id, v);
  }
  return out;
}

/** A whole answer body read: its scores for the group's ids and its token count. */
export function readAnswer(body: string, ids: readonly string[]): JudgeScores {
  const { content, tokens } = answerContent(body);
  return { scores: parseScores(content, ids), tokens };
}
