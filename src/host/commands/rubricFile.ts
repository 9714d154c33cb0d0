// Start Run's "From a File…" rubric (issue 51), read with Node's fs and no VS Code so it can be tested
// (test/unit/host/rubricFile.test.ts). The rubric is sent with every group and stored with the run, so
// the file must be what the user meant: a regular file (a FIFO or /dev/zero would hang the host, a
// device is no text), not a symlink, whose real path lies inside a workspace folder (a dialog can reach
// ~/.aws/credentials, which would then be sent and stored). At most RUBRIC_FILE_MAX_BYTES + 1 bytes are
// read, whatever the file's size says.
import * as fs from 'node:fs/promises';
import { constants } from 'node:fs';
import * as path from 'node:path';
import { count } from '../../shared/format';
import { messageText } from '../../shared/untrustedText';
import { RUBRIC_FILE_MAX_BYTES, rubricFromFile } from './judgeSteps';

type Read = { readonly rubric: string } | { readonly problem: string };

function inside(file: string, root: string): boolean {
  const rel = path.relative(root, file);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

/**
 * The rubric in `file` (an absolute path), or why not. `roots`: the workspace folders' paths; `label`:
 * the file as the user knows it (relative to the workspace), for the messages.
 */
export async function readRubricFile(file: string, roots: readonly string[], label: string): Promise<Read> {
  const where = messageText(label, 200);
  const refuse = (why: string): Read => ({ problem: `Agent RL: ${where} ${why}` });
  let real: string;
  try {
    const link = await fs.lstat(file);
    if (link.isSymbolicLink()) return refuse('is a symbolic link. Fix: choose the rubric file itself, inside the workspace');
    if (!link.isFile()) return refuse('is not a regular file (a folder, device or pipe). Fix: choose a text or Markdown file inside the workspace');
    real = await fs.realpath(file);
  } catch (e) {
    return refuse(`cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'}). Fix: choose a text or Markdown file inside the workspace`);
  }
  const realRoots = await Promise.all(roots.map((r) => fs.realpath(r).catch(() => path.resolve(r))));
  if (!realRoots.some((r) => inside(real, r)))
    return refuse(
      'is outside the workspace; a rubric is sent to the judge and stored with the run. Fix: put the rubric in a file in the workspace and choose that',
    );
  // O_NOFOLLOW: a symlink swapped in since lstat is refused too; the opened file is checked again
  const handle = await fs.open(real, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0)).catch(() => undefined);
  if (!handle) return refuse('cannot be opened. Fix: choose a text or Markdown file inside the workspace');
  try {
    if (!(await handle.stat()).isFile()) return refuse('is not a regular file. Fix: choose a text or Markdown file inside the workspace');
    const buf = Buffer.alloc(RUBRIC_FILE_MAX_BYTES + 1);
    let n = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buf, n, buf.length - n, n);
      if (bytesRead === 0) break;
      n += bytesRead;
      if (n === buf.length) break;
    }
    if (n > RUBRIC_FILE_MAX_BYTES)
      return refuse(`is larger than a rubric can be (${count(RUBRIC_FILE_MAX_BYTES)} bytes). Fix: choose the file that holds the rubric alone`);
    return rubricFromFile(label, buf.subarray(0, n));
  } finally {
    await handle.close();
  }
}
