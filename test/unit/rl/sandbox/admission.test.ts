// When the sandbox service starts a request (admission.ts), with the machine's load and free memory
// given by the test: one per core at any load, more only while few threads are runnable, never more
// than the slots or below the memory reserve, first in first out, and 504 (ok: false) past the wait
// bound or the queue bound.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Admission, defaultSlots, type AdmissionOptions, type Admitted } from '../../../../src/rl/sandbox/fusion/admission';

const GiB = 1024 ** 3;
const make = (o: Partial<AdmissionOptions> & { load?: () => number }): Admission =>
  new Admission({
    slots: 100,
    queueLimit: 100,
    maxWaitMs: 10_000,
    cores: 2,
    memoryReserveBytes: GiB,
    tickMs: 5,
    freeMemory: () => 8 * GiB,
    load: () => 0,
    ...o,
  });
const settled = async (p: Promise<Admitted>, ms = 60): Promise<Admitted | 'pending'> =>
  Promise.race([p, new Promise<'pending'>((r) => setTimeout(() => r('pending'), ms))]);

describe('sandbox service admission', () => {
  it('slots come from memory: half of it over 40 MB each, at least the cores, at most 1,024', () => {
    assert.equal(defaultSlots(24 * GiB, 2), 307);
    assert.equal(defaultSlots(256 * 1024 * 1024, 4), 4);
    assert.equal(defaultSlots(512 * GiB, 2), 1024);
  });

  it('on an idle machine sleeping programs start within a few ticks, far beyond the cores, up to the slots', async () => {
    const a = make({ slots: 50 });
    const got = await Promise.all(Array.from({ length: 50 }, () => a.acquire()));
    assert.ok(got.every((g) => g.ok));
    assert.equal(a.stats.running, 50);
    assert.equal(await settled(a.acquire()), 'pending', 'the 51st waits');
    a.close();
  });

  it('a busy machine starts one per core and queues the rest, first in first out, as the load falls', async () => {
    let load = 6; // six runnable threads on two cores
    const a = make({ load: () => load });
    const first = await Promise.all([a.acquire(), a.acquire()]);
    assert.ok(
      first.every((g) => g.ok),
      'one per core starts whatever the load',
    );
    const order: number[] = [];
    const queued = [0, 1, 2].map((i) => a.acquire().then((g) => (order.push(i), g)));
    assert.equal(await settled(queued[0]!), 'pending');
    assert.equal(a.stats.waiting, 3);
    load = 4; // two runnable threads per core: still no room
    assert.equal(await settled(queued[0]!), 'pending');
    load = 0;
    await Promise.all(queued);
    assert.deepEqual(order, [0, 1, 2]);
    a.close();
  });

  it('a release lets the next in line start even under load (while below a core each)', async () => {
    const a = make({ load: () => 50 });
    const [x] = await Promise.all([a.acquire(), a.acquire()]);
    const next = a.acquire();
    assert.equal(await settled(next), 'pending');
    (x as { release(): void }).release();
    assert.equal((await next).ok, true);
    a.close();
  });

  it('free memory under the reserve stops starts beyond the cores', async () => {
    let free = 0.5 * GiB;
    const a = make({ freeMemory: () => free });
    await Promise.all([a.acquire(), a.acquire()]);
    const third = a.acquire();
    assert.equal(await settled(third), 'pending');
    free = 4 * GiB;
    assert.equal((await third).ok, true);
    a.close();
  });

  it('past maxWaitMs or the queue bound a request is turned away (the server answers 504), and counted', async () => {
    const a = make({ slots: 1, queueLimit: 1, maxWaitMs: 80 });
    assert.equal((await a.acquire()).ok, true);
    const waiting = a.acquire();
    const full = await a.acquire();
    assert.equal(full.ok, false);
    assert.match((full as { reason: string }).reason, /^queue full: 1 waiting, 1 running/);
    const t0 = performance.now();
    const late = await waiting;
    assert.equal(late.ok, false);
    assert.match((late as { reason: string }).reason, /no execution slot within 80 ms/);
    assert.ok(performance.now() - t0 < 1000);
    assert.equal(a.stats.turnedAway, 2);
    a.close();
  });
});
