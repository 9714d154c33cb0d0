// Task files from the workspace: glob patterns expanded under a root folder, each file read with the
// reader of its format (JSON Lines line by line with JSON.parse, JSON arrays, CSV with csv-parse,
// Parquet with hyparquet), every record kept with where it came from ("train.jsonl line 3"), so an
// error can name the file and the line or row.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isObject as isRecord } from '../../../shared/protocol/guards';

export const TASK_FORMATS = ['jsonl', 'json', 'csv', 'parquet'] as const;
export type TaskFormat = (typeof TASK_FORMATS)[number];

/** One record of a task file, and where it is. */
export interface SourceRecord {
  /** The file, relative to the root when it is under it. */
  readonly file: string;
  /** "line 3" (JSON Lines), "item 3" (JSON), "row 3" (CSV, Parquet; 1-based, the header not counted). */
  readonly where: string;
  readonly value: Readonly<Record<string, unknown>>;
}

export class TaskFileError extends Error {
  readonly exitCode = 2; // bad input, not a failure while running: agent-rl exits 2 (src/cli/exitCodes.ts)
  constructor(message: string) {
    super(message);
    this.name = 'TaskFileError';
  }
}

function formatOf(file: string): TaskFormat | undefined {
  const ext = path.extname(file).toLowerCase();
  if (ext === '.jsonl' || ext === '.ndjson') return 'jsonl';
  if (ext === '.json') return 'json';
  if (ext === '.csv') return 'csv';
  if (ext === '.parquet' || ext === '.pq') return 'parquet';
  return undefined;
}

/** A glob (`*`, `?`, `**`, `{a,b}`) as a regular expression over '/'-separated relative paths. */
export function globRegExp(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') {
      if (pattern[i + 1] === '*') {
        i += 1;
        if (pattern[i + 1] === '/') {
          i += 1;
          re += '(?:[^/]*/)*';
        } else re += '.*';
      } else re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else if (c === '{') {
      const end = pattern.indexOf('}', i);
      if (end < 0) re += '\\{';
      else {
        // each alternative is a glob of its own ({*.jsonl,*.csv})
        re += `(?:${pattern
          .slice(i + 1, end)
          .split(',')
          .map((p) => globRegExp(p).source.slice(1, -1))
          .join('|')})`;
        i = end;
      }
    } else re += c.replace(/[.+^$()|[\]\\{}]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

const hasMagic = (p: string): boolean => /[*?{]/.test(p);

/** Files under `root` that `pattern` matches (sorted), skipping node_modules and dot folders. */
function expand(root: string, pattern: string): string[] {
  const abs = path.isAbsolute(pattern) ? pattern : path.join(root, pattern);
  if (!hasMagic(pattern) || fs.existsSync(abs)) return fs.existsSync(abs) ? [abs] : [];
  // walk from the pattern's longest folder prefix without a wildcard (the root's own name may hold any character)
  const parts = pattern.split(/[\\/]/);
  const firstMagic = parts.findIndex(hasMagic);
  const prefix = parts.slice(0, firstMagic).join(path.sep);
  const base = path.isAbsolute(pattern) ? prefix || path.sep : path.join(root, prefix);
  const re = globRegExp(parts.slice(firstMagic).join('/'));
  const out: string[] = [];
  const walk = (dir: string, rel: string, depth: number): void => {
    if (depth > 32) return;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (e.name !== 'node_modules' && !e.name.startsWith('.')) walk(path.join(dir, e.name), r, depth + 1);
      } else if (e.isFile() && re.test(r)) out.push(path.join(dir, e.name));
    }
  };
  walk(base, '', 0);
  return out.sort();
}

/** Every file the patterns name, each once; a pattern that matches nothing is an error. */
export function taskFilesOf(root: string, patterns: readonly string[]): string[] {
  if (patterns.length === 0)
    throw new TaskFileError('envOptions.tasks names no file. Fix: give a task file or a glob, e.g. "data/train.jsonl" or "data/*.parquet"');
  const seen = new Set<string>();
  const files: string[] = [];
  for (const p of patterns) {
    const found = expand(root, p);
    if (found.length === 0)
      throw new TaskFileError(`envOptions.tasks: "${p}" matches no file under ${root}. Fix: check the path (it is relative to the config file's folder)`);
    for (const f of found) {
      if (seen.has(f)) continue;
      seen.add(f);
      if (!formatOf(f))
        throw new TaskFileError(
          `envOptions.tasks: ${f} is not a task file this reads (JSON Lines .jsonl, JSON .json, CSV .csv or Parquet .parquet). Fix: convert it, or narrow the pattern "${p}"`,
        );
      files.push(f);
    }
  }
  return files;
}

/** BigInt (Parquet INT64) → number when exact, typed arrays → arrays, Dates → ISO text: plain JSON values. */
function plain(v: unknown): unknown {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (v instanceof Date) return v.toISOString();
  if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return Array.from(v as unknown as ArrayLike<number>, plain);
  if (Array.isArray(v)) return v.map(plain);
  if (isRecord(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

function readJsonLines(text: string, file: string): SourceRecord[] {
  const out: SourceRecord[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch (e) {
      throw new TaskFileError(`${file} line ${i + 1}: not valid JSON (${(e as Error).message}). Fix: one JSON object per line`);
    }
    if (!isRecord(v))
      throw new TaskFileError(
        `${file} line ${i + 1}: a task must be a JSON object, not ${Array.isArray(v) ? 'an array' : typeof v}. Fix: write {"prompt": ..., ...} on each line`,
      );
    out.push({ file, where: `line ${i + 1}`, value: v });
  });
  return out;
}

function readJson(text: string, file: string): SourceRecord[] {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new TaskFileError(`${file}: not valid JSON (${(e as Error).message}). Fix: correct the JSON syntax`);
  }
  // an array of tasks, or {"data": [...]} as Hugging Face's JSON exports write it
  const items = Array.isArray(v) ? v : isRecord(v) && Array.isArray(v.data) ? v.data : undefined;
  if (!items) throw new TaskFileError(`${file}: a JSON task file holds an array of task objects (or {"data": [...]}). Fix: wrap the tasks in [ ... ]`);
  return items.map((x: unknown, i) => {
    if (!isRecord(x)) throw new TaskFileError(`${file} item ${i + 1}: a task must be a JSON object. Fix: write {"prompt": ..., ...}`);
    return { file, where: `item ${i + 1}`, value: x };
  });
}

async function readCsv(text: string, file: string): Promise<SourceRecord[]> {
  const { parse } = await import('csv-parse/sync');
  let rows: Record<string, string>[];
  try {
    rows = parse<Record<string, string>>(text, { columns: true, skip_empty_lines: true, bom: true, relax_column_count: false });
  } catch (e) {
    const m = e as Error & { lines?: number };
    throw new TaskFileError(
      `${file}${m.lines ? ` line ${m.lines}` : ''}: not valid CSV (${m.message}). Fix: a header row, then one task per row with as many fields as the header`,
    );
  }
  // A cell holding a JSON list or object (tests, chat messages) is read as JSON.
  return rows.map((r, i) => ({
    file,
    where: `row ${i + 1}`,
    value: Object.fromEntries(
      Object.entries(r).map(([k, x]) => {
        const t = x.trim();
        if ((t.startsWith('[') && t.endsWith(']')) || (t.startsWith('{') && t.endsWith('}'))) {
          try {
            return [k, JSON.parse(t) as unknown];
          } catch {
            return [k, x];
          }
        }
        return [k, x];
      }),
    ),
  }));
}

async function readParquet(bytes: Buffer, file: string): Promise<SourceRecord[]> {
  const { parquetReadObjects } = await import('hyparquet');
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  let rows: Record<string, unknown>[];
  try {
    rows = await parquetReadObjects({ file: buffer });
  } catch (e) {
    throw new TaskFileError(
      `${file}: cannot read it as Parquet (${(e as Error).message}). Fix: write it with pyarrow or pandas (snappy, gzip or no compression), or convert it to JSON Lines`,
    );
  }
  return rows.map((r, i) => ({ file, where: `row ${i + 1}`, value: plain(r) as Record<string, unknown> }));
}

/** The records of one task file. */
export async function readTaskFile(absFile: string, shownAs: string): Promise<SourceRecord[]> {
  const format = formatOf(absFile);
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(absFile);
  } catch (e) {
    throw new TaskFileError(`${shownAs}: cannot read it (${(e as NodeJS.ErrnoException).code ?? String(e)}). Fix: check the path and its permissions`);
  }
  switch (format) {
    case 'jsonl':
      return readJsonLines(bytes.toString('utf8').replace(/^\uFEFF/, ''), shownAs);
    case 'json':
      return readJson(bytes.toString('utf8').replace(/^\uFEFF/, ''), shownAs);
    case 'csv':
      return readCsv(bytes.toString('utf8'), shownAs);
    case 'parquet':
      return readParquet(bytes, shownAs);
    default:
      throw new TaskFileError(`${shownAs}: not a task file format this reads. Fix: use .jsonl, .json, .csv or .parquet`);
  }
}

/** Every record of every file the patterns name, in file order. */
export async function readTaskRecords(root: string, patterns: readonly string[]): Promise<SourceRecord[]> {
  const out: SourceRecord[] = [];
  for (const f of taskFilesOf(root, patterns)) {
    const rel = path.relative(root, f);
    out.push(...(await readTaskFile(f, rel.startsWith('..') ? f : rel)));
  }
  return out;
}
