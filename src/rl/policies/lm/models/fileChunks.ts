// Whole reads and writes of byte ranges larger than one system call moves (issue 50, item 5: a tensor
// past 2 GiB, which a 64-bit engine holds). Node's readSync / writeSync take one length per call and
// Linux moves at most 0x7ffff000 bytes per read(2) or write(2), so a single call over a 2 GiB tensor
// comes back short (or is refused): these loop in chunks until every byte has moved.
import * as fs from 'node:fs';

/** Bytes asked for per call (1 GiB): under Linux's per-call cap and under 2^31. */
export const IO_CHUNK = 2 ** 30;

type ReadFn = (fd: number, buffer: Uint8Array, offset: number, length: number, position: number) => number;
type WriteFn = (fd: number, buffer: Uint8Array, offset: number, length: number) => number;

/**
 * Fills `buf` (every byte) from `fd` starting at file offset `position`, in calls of at most `chunk`
 * bytes; a read that returns nothing (end of file) throws `short(bytes read so far)`.
 */
export function readFully(fd: number, buf: Uint8Array, position: number, short: (got: number) => Error, read: ReadFn = fs.readSync, chunk = IO_CHUNK): void {
  let done = 0;
  while (done < buf.length) {
    const n = read(fd, buf, done, Math.min(chunk, buf.length - done), position + done);
    if (n <= 0) throw short(done);
    done += n;
  }
}

/** Writes every byte of `data` to `fd` at its current offset, in calls of at most `chunk` bytes (a short write continues where it stopped). */
export function writeFully(fd: number, data: Uint8Array, write: WriteFn = fs.writeSync, chunk = IO_CHUNK): void {
  let done = 0;
  while (done < data.length) {
    const n = write(fd, data, done, Math.min(chunk, data.length - done));
    if (n <= 0) throw new Error(`write: ${n} bytes written of the ${data.length - done} left (the disk may be full)`);
    done += n;
  }
}
