// The software and machine behind a run, recorded with it.
import type Database from 'better-sqlite3';
import * as os from 'node:os';
import type { RuntimeInfo } from '../shared/types';
import pkg from '../../package.json';

function betterSqliteVersion(): string {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return (require('better-sqlite3/package.json') as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export function runtimeInfo(db: Database.Database, compute: string): RuntimeInfo {
  return {
    workbench: pkg.version,
    node: process.versions.electron ? `${process.version} (Electron ${process.versions.electron}, VS Code's own runtime)` : process.version,
    platform: `${os.platform()} ${os.release()}`,
    arch: os.arch(),
    cpu: `${os.cpus()[0]?.model ?? 'unknown'} × ${os.cpus().length}`,
    sqlite: (db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v,
    betterSqlite3: betterSqliteVersion(),
    compute,
  };
}
