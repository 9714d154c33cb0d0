// One request to the judge's OpenAI-compatible endpoint (issue 51): POST {baseUrl}/chat/completions
// with the group's body, the key (if any) as a bearer header, a timeout over the whole exchange
// (connection to last byte) and a cap on the answer's size that stops reading at the cap, so a 10 MB
// answer costs 1 MB of memory and is refused. Failed tries are retried after 0.5 s, 1 s, 2 s … up to
// `retries` times; the last failure is the group's error. Errors say what went wrong and never carry
// the key or the request's headers.
import { JudgeAnswerError, readAnswer, type JudgeScores } from './judgeAnswer';
import type { JudgeRequestBody } from './judgePrompt';

/** The largest answer body read (bytes): a group's scores are a few hundred bytes, a verbose model's a few KB. */
export const MAX_ANSWER_BYTES = 1024 * 1024;

export interface JudgeEndpoint {
  readonly baseUrl: string;
  /** The bearer key, or '' for none; held in memory only, never in anything returned. */
  readonly apiKey: string;
  readonly timeoutMs: number;
  readonly retries: number;
  /** The first retry's wait (ms), doubled each time; tests shorten it. */
  readonly backoffMs?: number;
  readonly maxAnswerBytes?: number;
}

/** One try's outcome: the body as received (what is stored), or why there is none. */
interface Try {
  readonly body?: string;
  readonly error?: string;
  /** Worth another try (timeouts, network, 429 and 5xx, an answer that did not parse). */
  readonly transient: boolean;
}

/** What a request came to after its tries: the scores, or the last error, with the last body received. */
export interface JudgeCall {
  readonly answer?: JudgeScores;
  readonly error?: string;
  /** The last answer body received (capped), as text; absent when none arrived. */
  readonly body?: string;
  readonly tries: number;
  readonly latencyMs: number;
}

class TooLarge extends Error {}

/** The body as text, reading at most `max` bytes: past that the stream is cancelled and TooLarge thrown. */
async function readCapped(res: Response, max: number): Promise<string> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel();
    throw new TooLarge(`the answer declares ${declared} bytes, over the ${max}-byte limit`);
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      throw new TooLarge(`the answer passed the ${max}-byte limit (${size} bytes read, the rest not read)`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function once(e: JudgeEndpoint, body: string, ids: readonly string[]): Promise<Try & { answer?: JudgeScores }> {
  const url = `${e.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  // a key that cannot be a header value would make fetch throw a message quoting it, which is stored
  if (e.apiKey !== '' && !/^[\x21-\x7e]+$/.test(e.apiKey))
    return {
      error:
        "the key in reward.judge.apiKeyEnv's variable holds spaces, line breaks or non-ASCII characters (its value is not shown). Fix: set the variable to the key alone",
      transient: false,
    };
  if (e.apiKey !== '') headers.authorization = `Bearer ${e.apiKey}`;
  const signal = AbortSignal.timeout(e.timeoutMs);
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', headers, body, signal });
  } catch (err) {
    return { error: networkError(err, e.timeoutMs), transient: true };
  }
  let text: string;
  try {
    text = await readCapped(res, e.maxAnswerBytes ?? MAX_ANSWER_BYTES);
  } catch (err) {
    if (err instanceof TooLarge) return { error: err.message, transient: false };
    return { error: networkError(err, e.timeoutMs), transient: true };
  }
  if (!res.ok) {
    const transient = res.status === 408 || res.status === 429 || res.status >= 500;
    return {
      body: text,
      error: `the endpoint answered HTTP ${res.status}${res.status === 401 || res.status === 403 ? " (is the key in reward.judge.apiKeyEnv's variable the right one?)" : ''}`,
      transient,
    };
  }
  try {
    return { body: text, answer: readAnswer(text, ids), transient: false };
  } catch (err) {
    if (err instanceof JudgeAnswerError) return { body: text, error: err.message, transient: true };
    throw err;
  }
}

/** A fetch failure in words: the timeout, or the cause's code and message (never the request's headers). */
function networkError(err: unknown, timeoutMs: number): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError'))
    return `no whole answer within ${timeoutMs} ms (reward.judge.timeoutMs)`;
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const code = typeof cause === 'object' && cause !== null && 'code' in cause ? ` ${String(cause.code)}` : '';
  return `the request failed:${code} ${cause instanceof Error ? cause.message : String(cause)}`;
}

/** Asks the judge for one group's scores, with the endpoint's timeout and retries. */
export async function callJudge(e: JudgeEndpoint, request: JudgeRequestBody, ids: readonly string[], signal?: AbortSignal): Promise<JudgeCall> {
  const t0 = Date.now();
  const body = JSON.stringify(request);
  const backoff = e.backoffMs ?? 500;
  let last: Try = { error: 'not asked', transient: false };
  let tries = 0;
  for (let k = 0; k <= e.retries; k++) {
    if (k > 0) await new Promise((r) => setTimeout(r, backoff * 2 ** (k - 1)));
    if (signal?.aborted) break;
    tries += 1;
    const r = await once(e, body, ids);
    if (r.answer) return { answer: r.answer, ...(r.body !== undefined ? { body: r.body } : {}), tries, latencyMs: Date.now() - t0 };
    last = r;
    if (!r.transient) break;
  }
  const error = `${last.error ?? 'no answer'}${tries > 1 ? ` (after ${tries} tries)` : ''}`;
  return { error, ...(last.body !== undefined ? { body: last.body } : {}), tries, latencyMs: Date.now() - t0 };
}
