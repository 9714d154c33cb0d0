// Whole reads and writes past one system call (src/rl/policies/lm/models/fileChunks.ts; issue 50,
// item 5): a tensor over 2 GiB is read and written in chunks, every short read or write continued
// where it stopped, an end of file named; and the GGUF writer removes its `.partial` file when a write
// fails. The chunk size is a parameter, so the loops are exercised here on bytes, not gigabytes.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { IO_CHUNK, readFully, writeFully } from '../../../../../../src/rl/policies/lm/models/fileChunks';
import { writeGguf } from '../../../../../../src/rl/policies/lm/models/gguf';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-chunks-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const bytes = (n: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i * 37 + 11) & 0xff);

describe('file chunks', () => {
  it('asks for at most 1 GiB a call (under 2^31 and Linux’s 0x7ffff000 per read or write)', () => {
    assert.ok(IO_CHUNK <= 0x7ffff000 && IO_CHUNK >= 2 ** 20);
  });

  it('reads every byte in calls of at most `chunk`, continuing after short reads, at the right file offsets', () => {
    const src = bytes(1000);
    const calls: [number, number, number][] = [];
    const buf = new Uint8Array(700);
    // a reader that returns at most 5 bytes a call, from file offset `position`
    readFully(
      7,
      buf,
      250,
      () => new Error('short'),
      (fd, b, offset, length, position) => {
        assert.equal(fd, 7);
        calls.push([offset, length, position]);
        const n = Math.min(5, length);
        b.set(src.subarray(position, position + n), offset);
        return n;
      },
      64,
    );
    assert.deepEqual(buf, src.subarray(250, 950));
    assert.ok(
      calls.every(([, length]) => length <= 64),
      'no call asks for more than a chunk',
    );
    assert.equal(calls.length, 140);
    assert.deepEqual(calls[1], [5, 64, 255]);
  });

  it('names the end of a file that is shorter than asked, with the bytes read so far', () => {
    const file = path.join(tmp, 'short.bin');
    fs.writeFileSync(file, bytes(100));
    const fd = fs.openSync(file, 'r');
    try {
      assert.throws(
        () => readFully(fd, new Uint8Array(80), 40, (got) => new Error(`ends early after ${got} bytes`), undefined, 16),
        /ends early after 60 bytes/,
      );
      const whole = new Uint8Array(60);
      readFully(fd, whole, 40, () => new Error('short'), undefined, 16);
      assert.deepEqual(whole, bytes(100).subarray(40));
    } finally {
      fs.closeSync(fd);
    }
  });

  it('writes every byte in calls of at most `chunk`, continuing after short writes; a write that moves nothing is an error', () => {
    const data = bytes(500);
    const out: number[] = [];
    const lengths: number[] = [];
    writeFully(
      3,
      data,
      (_fd, b, offset, length) => {
        lengths.push(length);
        const n = Math.min(3, length);
        out.push(...b.subarray(offset, offset + n));
        return n;
      },
      32,
    );
    assert.deepEqual(Uint8Array.from(out), data);
    assert.ok(lengths.every((l) => l <= 32));
    assert.throws(() => writeFully(3, data, () => 0), /0 bytes written of the 500 left/);
    // on a real file, in chunks of 7 bytes
    const file = path.join(tmp, 'written.bin');
    const fd = fs.openSync(file, 'w');
    try {
      writeFully(fd, data, undefined, 7);
    } finally {
      fs.closeSync(fd);
    }
    assert.deepEqual(new Uint8Array(fs.readFileSync(file)), data);
  });

  it('the GGUF writer leaves no .partial file when a tensor fails, nor after a file it wrote whole', () => {
    const file = path.join(tmp, 'model.gguf');
    const meta: [string, { type: 'string'; value: string }][] = [['general.architecture', { type: 'string', value: 'llama' }]];
    assert.throws(
      () =>
        writeGguf(file, meta, [
          { name: 'a', shape: [2, 4], type: 'F32', data: () => new Uint8Array(32) },
          { name: 'b', shape: [2, 4], type: 'F32', data: () => new Uint8Array(31) },
        ]),
      /GGUF tensor b: 31 bytes/,
    );
    assert.deepEqual(
      fs.readdirSync(tmp).filter((f) => f.startsWith('model.gguf')),
      [],
      'neither the file nor its part',
    );
    assert.throws(
      () =>
        writeGguf(file, meta, [
          {
            name: 'c',
            shape: [4],
            type: 'F32',
            data: () => {
              throw new Error('the tensor could not be read');
            },
          },
        ]),
      /could not be read/,
    );
    assert.deepEqual(
      fs.readdirSync(tmp).filter((f) => f.startsWith('model.gguf')),
      [],
    );
    writeGguf(file, meta, [{ name: 'a', shape: [2, 4], type: 'F32', data: () => new Uint8Array(32) }]);
    assert.deepEqual(
      fs.readdirSync(tmp).filter((f) => f.startsWith('model.gguf')),
      ['model.gguf'],
    );
  });
});
