// What Import Run says (pure, tested without VS Code). A dump folder's name, its files' names, a
// malformed line's reason and an import's error are untrusted (the folder came from someone else's
// cluster): the quick pick's and the progress notification's titles and the notifications get them
// through messageText, the output channel with its invisible characters marked.
import * as path from 'node:path';
import type { ImporterToHost } from '../../shared/protocol/importProtocol';
import { messageText, showInvisibles } from '../../shared/untrustedText';

/** The Import / Import and follow quick pick's title. */
export function importPickTitle(rolloutDir: string): string {
  return messageText(`Import ${path.basename(rolloutDir)}`, 200);
}

/** The progress notification's title while the worker reads the folder. */
export function importProgressTitle(rolloutDir: string): string {
  return messageText(`Agent RL: importing ${path.basename(rolloutDir)}`, 200);
}

/** The output channel's line when an import starts. */
export function importStartLine(rolloutDir: string, found: { readonly validationDir?: string; readonly configFile?: string }, db: string): string {
  return showInvisibles(
    `importing verl dumps from ${rolloutDir}${found.validationDir ? `, validation ${found.validationDir}` : ''}${found.configFile ? `, config ${found.configFile}` : ''} into ${db}`,
  );
}

/** The output channel's line for a malformed dump line. */
export function malformedLine(msg: Extract<ImporterToHost, { type: 'malformed' }>): string {
  return showInvisibles(`${msg.file}:${msg.line}: malformed line skipped: ${msg.reason}`);
}

export function importFinishedMessage(msg: Extract<ImporterToHost, { type: 'finished' }>, malformed: number): string {
  const note = malformed ? ` ${malformed} malformed lines skipped (see the Agent RL output).` : '';
  return messageText(`Agent RL: run ${msg.runId} imported: ${msg.steps} steps, ${msg.trajectories} trajectories added.${note}`, 600);
}

export function importFailedMessage(error: string): string {
  return messageText(`Agent RL: import failed: ${error}`, 600);
}

/** An error at the command's boundary: the output channel's line. */
export function importErrorLine(message: string): string {
  return `error: ${showInvisibles(message)}`;
}
