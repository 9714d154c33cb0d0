// A checkpoint placed the way huggingface-cli and transformers leave a download in the Hugging Face
// cache: ROOT/models--ORG--NAME/blobs/<sha256> holds each file once, snapshots/<revision>/<file> is a
// relative symlink into blobs/, and refs/main names the revision. Plain JavaScript: the integration
// tests (TypeScript) and the e2e suite (which runs without the compiled tests) both use it.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Copies the files of `source` (a checkpoint folder) into the cache at `root` as `repoId` ("ORG/NAME")
 * at `revision`, with refs/main pointing there; returns the snapshot folder.
 */
export function writeCacheLayout(root, repoId, source, revision = 'a'.repeat(40)) {
  const repo = path.join(root, `models--${repoId.replace('/', '--')}`);
  const snapshot = path.join(repo, 'snapshots', revision);
  fs.mkdirSync(path.join(repo, 'blobs'), { recursive: true });
  fs.mkdirSync(snapshot, { recursive: true });
  fs.mkdirSync(path.join(repo, 'refs'), { recursive: true });
  for (const name of fs.readdirSync(source)) {
    const file = path.join(source, name);
    if (!fs.statSync(file).isFile() || name.startsWith('.')) continue;
    const bytes = fs.readFileSync(file);
    const blob = crypto.createHash('sha256').update(bytes).digest('hex');
    fs.writeFileSync(path.join(repo, 'blobs', blob), bytes);
    const link = path.join(snapshot, name);
    fs.rmSync(link, { force: true });
    fs.symlinkSync(path.join('..', '..', 'blobs', blob), link);
  }
  fs.writeFileSync(path.join(repo, 'refs', 'main'), revision);
  return snapshot;
}
