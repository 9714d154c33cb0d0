// Opening the run database: WAL, foreign keys, a busy timeout, migrations, and clear errors for files
// that are not ours, are corrupt, are locked or come from a newer release. A file we cannot use is
// never overwritten: every check runs before the first write.
import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { migrate, SCHEMA_VERSION, SchemaTooNewError } from './migrations';

/** 'ARLW' — marks the file as an Agent RL Workbench database. */
export const APPLICATION_ID = 0x41524c57;
export const DEFAULT_DB_PATH = path.join('.agent-rl', 'runs.sqlite');

/**
 * Where a run's checkpoint goes: <db folder>/checkpoints/<db file name without extension>/run-<id>.
 * Run ids count per database, so two databases in one folder must not share a checkpoint folder.
 */
export function checkpointDirFor(dbFile: string, runId: number): string {
  const db = path.resolve(dbFile);
  return path.join(path.dirname(db), 'checkpoints', path.basename(db).replace(/\.[^.]*$/, '') || 'runs', `run-${runId}`);
}

/** Where a run's resume points go: beside its final checkpoint. */
export function resumeDirFor(dbFile: string, runId: number): string {
  return path.join(checkpointDirFor(dbFile, runId), 'resume');
}

export class StoreError extends Error {
  readonly exitCode = 2; // bad input, not a failure while running: agent-rl exits 2 (src/cli/exitCodes.ts)
  constructor(
    message: string,
    readonly code: 'not_a_database' | 'locked' | 'too_new' | 'foreign' | 'readonly' | 'io' | 'full',
  ) {
    super(message);
    this.name = 'StoreError';
  }
}

export interface OpenOptions {
  /** Wait this long for another writer's lock before failing (ms). */
  readonly busyTimeoutMs?: number;
  readonly readonly?: boolean;
}

function sqliteCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e ? String(e.code) : undefined;
}

/** Turns SQLite's errors into actionable ones; rethrows anything else. */
export function explainSqliteError(e: unknown, file: string): never {
  if (e instanceof StoreError || e instanceof SchemaTooNewError) throw e;
  const code = sqliteCode(e) ?? '';
  const detail = e instanceof Error ? e.message : String(e);
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) {
    throw new StoreError(
      `The file ${file} is not a readable SQLite database (${code}: ${detail}). It was left untouched. ` +
        'Fix: move it aside (or restore it from a backup) and run again, or pass --db with another file.',
      'not_a_database',
    );
  }
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    throw new StoreError(
      `The database ${file} is locked by another process (${code}). Nothing was written. ` +
        'Fix: wait for the other writer to finish (or stop it), or pass --db with another file.',
      'locked',
    );
  }
  if (code === 'SQLITE_FULL' || code === 'SQLITE_IOERR_WRITE' || code === 'SQLITE_IOERR_FSYNC') {
    throw new StoreError(
      `Could not write to ${file}: the disk (or the database's size limit) is full (${code}). The write in progress was rolled back; ` +
        'everything stored before it is whole. Fix: free space on that disk, then continue the run with `agent-rl train --resume <run>` ' +
        '(or "Agent RL: Resume Run"), or pass --db with a file on another disk.',
      'full',
    );
  }
  if (code === 'SQLITE_READONLY' || code === 'SQLITE_CANTOPEN' || code === 'SQLITE_PERM') {
    throw new StoreError(`Cannot open ${file} for writing (${code}: ${detail}). Fix: check the file's permissions or pass --db with a writable path.`, 'io');
  }
  throw e;
}

/**
 * Switches the file to WAL, a property of the file: once any process has, nothing is left to do. The
 * switch needs the file alone, and while another connection holds a write lock in rollback mode
 * SQLite fails it at once with SQLITE_BUSY instead of running the busy handler. Processes opening one
 * new database together (the extension's workers, CLI runs) meet exactly that, so the switch is
 * retried here within the same busy timeout.
 */
function enableWal(db: Database.Database, timeoutMs: number): void {
  const deadline = Date.now() + timeoutMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let ms = 2; ; ms = Math.min(50, ms * 2)) {
    try {
      if (db.pragma('journal_mode', { simple: true }) !== 'wal') db.pragma('journal_mode = WAL');
      return;
    } catch (e) {
      if (!(sqliteCode(e) ?? '').startsWith('SQLITE_BUSY') || Date.now() >= deadline) throw e;
    }
    Atomics.wait(pause, 0, 0, ms); // openStore is synchronous: sleep without spinning
  }
}

/** Opens (creating if needed) and migrates the database at `file`. */
export function openStore(file: string, options: OpenOptions = {}): Database.Database {
  const resolved = path.resolve(file);
  if (options.readonly && !fs.existsSync(resolved)) {
    throw new StoreError(`No database at ${resolved}. Fix: run \`agent-rl train\` first, or pass --db with the right file.`, 'io');
  }
  if (!options.readonly) fs.mkdirSync(path.dirname(resolved), { recursive: true });
  let db: Database.Database | undefined;
  try {
    const timeout = options.busyTimeoutMs ?? 5000;
    db = new Database(resolved, { readonly: options.readonly ?? false, timeout });
    // Read the header first: a foreign or corrupt file fails here, before any write. In one read
    // transaction, so that another process migrating the file meanwhile cannot show us its tables
    // with the version from before them (which looks like another application's database).
    const open = db;
    const { appId, version, tables } = open.transaction(() => ({
      appId: open.pragma('application_id', { simple: true }) as number,
      version: open.pragma('user_version', { simple: true }) as number,
      tables: (open.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as { n: number }).n,
    }))();
    if ((appId !== 0 && appId !== APPLICATION_ID) || (appId === 0 && version === 0 && tables > 0)) {
      throw new StoreError(
        `The file ${resolved} is an SQLite database of another application (application_id ${appId}, ${tables} tables). It was left untouched. ` +
          'Fix: pass --db with a path for the Agent RL database.',
        'foreign',
      );
    }
    if (!options.readonly) {
      enableWal(db, timeout);
      db.pragma('foreign_keys = ON');
      db.pragma('synchronous = NORMAL');
      migrate(db, resolved);
      if (appId === 0) db.pragma(`application_id = ${APPLICATION_ID}`);
    } else {
      db.pragma('foreign_keys = ON');
      migrate(db, resolved, 0); // only the "too new" check: a reader never writes
      if (version < SCHEMA_VERSION) {
        throw new StoreError(
          `The database ${resolved} has schema version ${version} and needs an upgrade to ${SCHEMA_VERSION}, which a read-only open cannot do. Fix: open it once without read-only (any agent-rl command does).`,
          'io',
        );
      }
    }
    return db;
  } catch (e) {
    db?.close();
    explainSqliteError(e, resolved);
  }
}
