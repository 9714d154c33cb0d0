import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { differingItems, renderRescore } from '../../../src/host/commands/rescoreMarkdown';
import { errorHeadline, summarizeRescore, type RescoreItem, type RescoreReport } from '../../../src/shared/rescore';

const s = (reward: number, success = reward >= 1) => ({ reward, success, publicPass: success, privatePass: success });
const items: RescoreItem[] = [
  { trajectoryId: 1, iteration: 1, group: 0, indexInGroup: 0, taskId: 'same', old: s(1), new: s(1), error: null },
  { trajectoryId: 2, iteration: 1, group: 0, indexInGroup: 1, taskId: 'a | b [x](http://evil) `tick`', old: s(1), new: s(0.25), error: null },
  {
    trajectoryId: 3,
    iteration: 2,
    group: 1,
    indexInGroup: 0,
    taskId: 'raised',
    old: s(0),
    new: null,
    error: 'reward.py: reward() raised:\nTraceback …\nValueError: no',
  },
  { trajectoryId: 4, iteration: 2, group: 1, indexInGroup: 1, taskId: 'checks', old: s(0.5, false), new: { ...s(0.5, false), publicPass: true }, error: null },
];
const report: RescoreReport = {
  id: 7,
  runId: 2,
  reward: { file: '/w/reward.py', sha256: 'ab'.repeat(32), label: 'reward.py' },
  iterationFrom: 1,
  iterationTo: 2,
  trajectoryId: null,
  createdAt: '2026-01-01T00:00:00Z',
  wallMs: 1234,
  summary: summarizeRescore(items),
  items,
};

describe('the re-score report', () => {
  it('lists only what differs — errors first, then the largest |Δ|, a check that flipped too', () => {
    assert.deepEqual(
      differingItems(items).map((x) => x.trajectoryId),
      [3, 2, 4],
    );
  });

  it('renders stored text in code spans: no link forms, a pipe does not split the table row', () => {
    const md = renderRescore(report, '# run [name](x)');
    assert.match(md, /^# Re-score 7 — run 2 ` # run \[name\]\(x\) `, iterations 1\.\.2$/m);
    assert.match(md, /rewards changed: 1; mean reward 0\.833 → 0\.583/);
    assert.match(md, /^## Where the new scores differ \(3\)$/m);
    const row = md.split('\n').find((l) => l.startsWith('| 2 |'))!;
    assert.ok(row.includes('a \\| b'), row);
    assert.equal(row.split(/(?<!\\)\|/).length - 2, 9, 'nine cells');
    assert.ok(!/\]\(http/.test(md.replace(/(`+) [^\n]*? \1(?!`)/g, '')), 'no link outside code');
    assert.match(md, /\| 3 \| 2 \| 1 #0 \| ` raised ` \| 0\.000 \| error \|/);
  });

  it('says so when nothing differs', () => {
    const same = { ...report, items: [items[0]!], summary: summarizeRescore([items[0]!]) };
    assert.match(renderRescore(same, 'r'), /Every re-scored trajectory scores as it was stored\./);
  });

  it('a traceback shows as its first and last line', () => {
    assert.equal(
      errorHeadline('reward.py: reward() raised:\nTraceback (most recent call last):\n  File …\nValueError: no. Fix: x'),
      'reward.py: reward() raised: … ValueError: no. Fix: x',
    );
    assert.equal(errorHeadline('one line'), 'one line');
  });
});
