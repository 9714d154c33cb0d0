// @ts-check
// A node:test reporter that prints, after the run, one line of what it did not test: the skipped tests
// grouped by their reason (each reason says what is missing and how to enable it, e.g. "strict is not
// available here: bubblewrap (bwrap) is not installed. Fix: apt-get install bubblewrap"). `npm test`
// runs it beside the spec reporter, so a green run on a machine without bubblewrap or chromium says
// what it covered less. Todo tests are counted the same way.

/**
 * @param {AsyncIterable<{ type: string, data: { name?: string, skip?: string | boolean, todo?: string | boolean } }>} source
 * @returns {AsyncGenerator<string, void>}
 */
export default async function* skipSummary(source) {
  /** @type {Map<string, number>} */
  const reasons = new Map();
  let count = 0;
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const why = event.data.skip ?? event.data.todo;
    if (why === undefined || why === false) continue;
    count++;
    const reason = typeof why === 'string' && why !== '' ? why : `${event.data.name ?? 'a test'} (no reason given)`;
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }
  if (count === 0) {
    yield 'skipped: none — every test ran on this machine\n';
    return;
  }
  const parts = [...reasons].map(([reason, n]) => `${n} × ${reason}`);
  yield `skipped: ${count} — ${parts.join('; ')}\n`;
}
