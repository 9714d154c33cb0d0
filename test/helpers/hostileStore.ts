// Plants hostile text in a run database: every text column of every table, found from the schema at
// run time (sqlite_master, PRAGMA table_info), so a column added by a new migration is planted without
// anyone listing it. A column that holds JSON gets the payload in every string value and as a new key
// in every object (a number under that key where its siblings are all numbers: a metric, a reward
// extra), keeping only the few values the readers dispatch on (KEEP); any other column gets the payload
// as its whole value, so that a view that shows only the start of a field shows the payload.
import type Database from 'better-sqlite3';
import { isDeepStrictEqual } from 'node:util';

export interface StoreColumn {
  readonly table: string;
  readonly column: string;
  /** `table.column`. */
  readonly id: string;
  readonly primaryKey: boolean;
}

/** What was planted where: the columns that took the payload, and the ones whose CHECK refused text. */
export interface PlantReport {
  readonly planted: readonly StoreColumn[];
  readonly refused: readonly { readonly column: StoreColumn; readonly reason: string }[];
  /** Rows changed, over all columns. */
  readonly cells: number;
}

/**
 * Values that decide which code path reads a record, kept as stored so that path is still the one
 * exercised (a verl run's config says `source: "verl"`; `show` prints it through its own lines).
 * Paths are `table.column` and a JSON path from the value's root.
 */
export const KEEP: ReadonlySet<string> = new Set(['runs.config_json:$.source']);

/** Tables of the database (not SQLite's own). */
export function tables(db: Database.Database): string[] {
  return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[]).map(
    (r) => r.name,
  );
}

interface ColumnInfo {
  readonly name: string;
  readonly type: string;
  readonly pk: number;
}

const columnsOf = (db: Database.Database, table: string): ColumnInfo[] => db.prepare(`PRAGMA table_info("${table}")`).all() as ColumnInfo[];

/** Columns with text affinity (SQLite's rule: a declared type containing CHAR, CLOB or TEXT). */
export function textColumns(db: Database.Database): StoreColumn[] {
  return tables(db).flatMap((table) =>
    columnsOf(db, table)
      .filter((c) => /CHAR|CLOB|TEXT/i.test(c.type))
      .map((c) => ({ table, column: c.name, id: `${table}.${c.name}`, primaryKey: c.pk > 0 })),
  );
}

/** A stored value as data: JSON objects and arrays parsed, anything else as it is. */
export function asData(value: unknown): unknown {
  if (typeof value !== 'string' || !/^\s*[[{]/.test(value)) return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

/** `value` with the payload in every string and as a key of every object (KEEP paths left alone). */
export function plantJson(value: unknown, payload: string, column: string, at = '$'): unknown {
  if (typeof value === 'string') return KEEP.has(`${column}:${at}`) ? value : payload;
  if (Array.isArray(value)) return value.map((v, i) => plantJson(v, payload, column, `${at}[${i}]`));
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value as Record<string, unknown>);
  const numeric = entries.length > 0 && entries.every(([, v]) => typeof v === 'number');
  const out: Record<string, unknown> = Object.fromEntries(entries.map(([k, v]) => [k, plantJson(v, payload, column, `${at}.${k}`)]));
  if (!(payload in out)) out[payload] = numeric ? 1 : payload;
  return out;
}

/** How each row of a table is addressed: its rowid, or (WITHOUT ROWID) its primary key. */
function rowKeys(db: Database.Database, table: string): string[] {
  const pk = columnsOf(db, table)
    .filter((c) => c.pk > 0)
    .sort((a, b) => a.pk - b.pk)
    .map((c) => c.name);
  const withoutRowid = /WITHOUT\s+ROWID/i.test(
    (db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) as { sql: string }).sql,
  );
  return withoutRowid ? pk : ['rowid'];
}

/** Plants `payload` in every text column of every row. Primary-key text gets a row number after it (rows must stay distinct). */
export function plantStore(db: Database.Database, payload: string): PlantReport {
  const planted: StoreColumn[] = [];
  const refused: { column: StoreColumn; reason: string }[] = [];
  let cells = 0;
  for (const col of textColumns(db)) {
    const keys = rowKeys(db, col.table);
    const sel = keys.map((k) => `"${k}"`).join(', ');
    const where = keys.map((k) => `"${k}" = ?`).join(' AND ');
    const rows = db.prepare(`SELECT ${sel}, "${col.column}" AS v FROM "${col.table}"`).raw().all() as unknown[][];
    const update = db.prepare(`UPDATE "${col.table}" SET "${col.column}" = ? WHERE ${where}`);
    try {
      db.transaction(() => {
        rows.forEach((r, i) => {
          const old = r[r.length - 1];
          const data = asData(old);
          const value =
            typeof data === 'object' && data !== null ? JSON.stringify(plantJson(data, payload, col.id)) : col.primaryKey ? `${payload} #${i}` : payload;
          update.run(value, ...r.slice(0, keys.length));
        });
      })();
      planted.push(col);
      cells += rows.length;
    } catch (e) {
      refused.push({ column: col, reason: (e as Error).message });
    }
  }
  return { planted, refused, cells };
}

/** Every row of every table, as data (for "nothing was lost or changed"). */
export function snapshot(db: Database.Database): Record<string, unknown[][]> {
  return Object.fromEntries(tables(db).map((t) => [t, (db.prepare(`SELECT * FROM "${t}"`).raw().all() as unknown[][]).map((r) => r.map(asData))]));
}

/** Whether `needle` occurs in `haystack` exactly: equal to it, or to one of its values at any depth. */
export function containsExactly(haystack: unknown, needle: unknown): boolean {
  if (isDeepStrictEqual(haystack, needle)) return true;
  if (Array.isArray(haystack)) return haystack.some((h) => containsExactly(h, needle));
  if (typeof haystack === 'object' && haystack !== null) return Object.values(haystack).some((h) => containsExactly(h, needle));
  return false;
}
