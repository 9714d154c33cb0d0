// Where the verify scripts keep their runs (issue 26: a figure in a closing note must be re-readable
// from its runs): a dated folder under .agent-rl/verify/<script>/, never a temporary folder.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');

describe('verify scripts: where their runs are kept', () => {
  it('.agent-rl/verify/<script>/<UTC date and time>/ under the root, with no colon in the name', async () => {
    const { verifyFolder } = (await import(pathToFileURL(path.join(ROOT, 'scripts', 'agentRl.mjs')).href)) as {
      verifyFolder: (script: string, root?: string, now?: Date) => string;
    };
    const at = new Date(Date.UTC(2026, 11, 3, 4, 5, 6, 789));
    assert.equal(verifyFolder('learning', '/repo', at), path.join('/repo', '.agent-rl', 'verify', 'learning', '2026-12-03T04-05-06Z'));
    assert.equal(verifyFolder('binary-search', '/repo', at), path.join('/repo', '.agent-rl', 'verify', 'binary-search', '2026-12-03T04-05-06Z'));
  });
});
