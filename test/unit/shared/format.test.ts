import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  absoluteTime,
  axisTick,
  bytes,
  count,
  duration,
  fixed,
  MISSING,
  parameters,
  percent,
  relativeTime,
  sig,
  signed,
  tickLabel,
} from '../../../src/shared/format';

describe('format: one way to show a number', () => {
  it('sig: 3 significant digits, exponent form for tiny numbers (6.5e-7, never 2.0000000E-7)', () => {
    assert.equal(sig(-4.6403), '-4.64');
    assert.equal(sig(0.99812), '0.998');
    assert.equal(sig(1), '1');
    assert.equal(sig(1.5), '1.5');
    assert.equal(sig(12.345), '12.3');
    assert.equal(sig(0.0012345), '0.00123');
    assert.equal(sig(6.5e-7), '6.5e-7');
    assert.equal(sig(2e-7), '2e-7');
    assert.equal(sig(-4.7712e-7), '-4.77e-7');
    assert.equal(sig(0.00099996), '0.001', 'rounds before choosing the form');
    assert.equal(sig(999.6), '1,000');
    assert.equal(sig(1234.5), '1,235');
    assert.equal(sig(1234567), '1.23e6');
    assert.equal(sig(0), '0');
    assert.equal(sig(-0), '0');
    assert.equal(sig(-1e-12, 3), '-1e-12');
    assert.equal(sig(Math.PI, 5), '3.1416');
    for (const x of [undefined, null, NaN, Infinity, -Infinity, '1', {}]) assert.equal(sig(x), MISSING);
    assert.equal(sig(undefined, 3, '?'), '?');
    for (const x of [1e-9, 3.3e-5, 0.5, 7, 42.42, 512.5, 2 ** 40, -8e-4]) assert.doesNotMatch(sig(x), /E|e\+|0{4,}[1-9]/, String(x));
  });

  it('fixed and count: thousands separators, no negative zero', () => {
    assert.equal(fixed(0.5, 3), '0.500');
    assert.equal(fixed(1234.5, 1), '1,234.5');
    assert.equal(fixed(-1234567.891, 2), '-1,234,567.89');
    assert.equal(fixed(-0.0001, 2), '0.00');
    assert.equal(fixed(NaN, 2), MISSING);
    assert.equal(fixed(undefined, 2, '?'), '?');
    assert.equal(count(12345), '12,345');
    assert.equal(count(999), '999');
    assert.equal(count(1e9), '1,000,000,000');
    assert.equal(count(-4321.4), '-4,321');
    assert.equal(count('3'), MISSING);
  });

  it('signed and percent', () => {
    assert.equal(signed(0.12), '+0.12');
    assert.equal(signed(-0.5), '-0.5');
    assert.equal(signed(0), '0');
    assert.equal(
      signed(1e-9, (v) => fixed(v, 3)),
      '0.000',
      'no sign on what rounds to zero',
    );
    assert.equal(
      signed(0.25, (v) => fixed(v, 3)),
      '+0.250',
    );
    assert.equal(signed(undefined), MISSING);
    assert.equal(percent(0.125), '12.5%');
    assert.equal(percent(1, 0), '100%');
    assert.equal(percent(0.33333, 2), '33.33%');
    assert.equal(percent(NaN), MISSING);
  });

  it('duration: ms → s → min → h, and the terminal’s compact form', () => {
    assert.equal(duration(850), '850 ms');
    assert.equal(duration(999.7), '1.0 s');
    assert.equal(duration(1500), '1.5 s');
    assert.equal(duration(42_000), '42 s');
    assert.equal(duration(125_000), '2 min 05 s');
    assert.equal(duration(3_720_000), '1 h 02 min');
    assert.equal(duration(NaN), MISSING);
    assert.equal(duration(300, { compact: true }), '0.3s');
    assert.equal(duration(1500, { compact: true }), '1.5s');
    assert.equal(duration(42_000, { compact: true }), '42s');
    assert.equal(duration(125_000, { compact: true }), '2m05s');
    assert.equal(duration(2_946_000, { compact: true }), '49m06s');
    assert.equal(duration(3_720_000, { compact: true }), '1h02m');
    assert.equal(duration(Infinity, { compact: true }), '?');
  });

  it('bytes and parameters', () => {
    assert.equal(bytes(2.09 * 2 ** 30), '2.09 GiB');
    assert.equal(bytes(943 * 2 ** 20), '943.0 MiB');
    assert.equal(bytes(2 ** 20), '1.0 MiB');
    assert.equal(parameters(136_000), '136 K');
    assert.equal(parameters(494_000_000), '494 M');
    assert.equal(parameters(1.7e9), '1.7 B');
  });

  it('relative and absolute times', () => {
    const now = Date.parse('2025-01-02T13:45:07Z');
    assert.equal(relativeTime(now - 3000, now), 'just now');
    assert.equal(relativeTime(now - 45_000, now), '45 s ago');
    assert.equal(relativeTime(new Date(now - 5 * 60_000), now), '5 min ago');
    assert.equal(relativeTime('2025-01-02T10:45:07Z', now), '3 h ago');
    assert.equal(relativeTime(now - 86_400_000, now), '1 day ago');
    assert.equal(relativeTime(now - 2 * 86_400_000, now), '2 days ago');
    assert.equal(relativeTime(now + 5 * 60_000, now), 'in 5 min');
    assert.equal(relativeTime('not a time', now), MISSING);
    assert.equal(absoluteTime('2025-01-02T13:45:07.123Z', 'utc'), '2025-01-02 13:45:07');
    assert.equal(absoluteTime(Date.UTC(2024, 11, 31, 23, 59, 59), 'utc'), '2024-12-31 23:59:59');
    assert.match(absoluteTime(now), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    assert.equal(absoluteTime('garbage', 'utc'), MISSING);
  });

  it('tickLabel: as precise as the step between ticks, exponent form on a tiny axis', () => {
    const label = (ticks: number[]): string[] => ticks.map((t) => tickLabel(t, ticks));
    assert.deepEqual(label([0, 5e-8, 1e-7, 1.5e-7, 2e-7]), ['0', '5e-8', '1e-7', '1.5e-7', '2e-7']);
    assert.deepEqual(label([0, 2.5e-8, 5e-8, 7.5e-8]), ['0', '2.5e-8', '5e-8', '7.5e-8']);
    assert.deepEqual(label([0, 0.1, 0.2, 0.30000000000000004, 0.4]), ['0', '0.1', '0.2', '0.3', '0.4']);
    assert.deepEqual(label([0, 0.5, 1, 1.5]), ['0', '0.5', '1.0', '1.5']);
    assert.deepEqual(label([0.9999, 1, 1.0001, 1.0002]), ['0.9999', '1.0000', '1.0001', '1.0002']);
    assert.deepEqual(label([-2, -1, 0, 1]), ['-2', '-1', '0', '1']);
    assert.deepEqual(label([0, 2000, 4000]), ['0', '2,000', '4,000']);
    assert.deepEqual(label([0, 2e6, 4e6]), ['0', '2e6', '4e6']);
    assert.deepEqual(label([0, 0.25, 0.5]), ['0', '0.25', '0.50']);
    assert.equal(tickLabel(3, []), '3');
    assert.equal(tickLabel(NaN, [1, 2]), '');
    for (const ticks of [
      [0, 2e-7, 4e-7],
      [1e-9, 2e-9],
    ])
      for (const t of ticks) assert.doesNotMatch(tickLabel(t, ticks), /E|\.0{3,}/);
  });

  it("axisTick is chart.js's ticks.callback", () => {
    const ticks = [0, 1e-7, 2e-7].map((value) => ({ value }));
    assert.deepEqual(
      ticks.map((t, i) => axisTick(t.value, i, ticks)),
      ['0', '1e-7', '2e-7'],
    );
    assert.equal(axisTick('0.5', 0, [{ value: 0 }, { value: 0.5 }]), '0.5');
  });
});
