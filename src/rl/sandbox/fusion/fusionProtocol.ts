// The part of SandboxFusion's HTTP API that verl calls (bytedance/SandboxFusion at 469de084,
// sandbox/server/sandbox_api.py and sandbox/runners/types.py): POST /run_code with a RunCodeRequest,
// answered by a RunCodeResponse. verl's SandboxFusionTool and its sandbox_fusion reward send
// {compile_timeout, run_timeout, code, stdin, memory_limit_MB, language, files: {}, fetch_files: []}
// and read status, compile_result and run_result (status, return_code, stdout, stderr, execution_time).

import * as os from 'node:os';
import type { ExecutionResult } from '../limits';

/** SandboxFusion's `Language` literal; a request with another value is a validation error (HTTP 422). */
export const FUSION_LANGUAGES = [
  'python',
  'cpp',
  'nodejs',
  'go',
  'go_test',
  'java',
  'php',
  'csharp',
  'bash',
  'typescript',
  'sql',
  'rust',
  'cuda',
  'lua',
  'R',
  'perl',
  'D_ut',
  'ruby',
  'scala',
  'julia',
  'pytest',
  'junit',
  'kotlin_script',
  'jest',
  'verilog',
  'python_gpu',
  'lean',
  'swift',
  'racket',
] as const;
export type FusionLanguage = (typeof FUSION_LANGUAGES)[number];

export interface RunCodeRequest {
  /** Seconds (compiled languages only; python has no compile step). Default 10. */
  readonly compile_timeout: number;
  /** Seconds. Default 10. */
  readonly run_timeout: number;
  /** Megabytes; −1 = no limit of the request's own (the server's default applies). */
  readonly memory_limit_MB: number;
  readonly code: string;
  readonly stdin: string | null;
  readonly language: FusionLanguage;
  /** Relative path → base64 content, written before the run (null values are skipped, as SandboxFusion does). */
  readonly files: Readonly<Record<string, string | null>>;
  readonly fetch_files: readonly string[];
}

export type RunStatus = 'Success' | 'Failed' | 'SandboxError';
export type CommandRunStatus = 'Finished' | 'Error' | 'TimeLimitExceeded';

export interface CommandRunResult {
  readonly status: CommandRunStatus;
  /** Seconds. */
  readonly execution_time: number | null;
  readonly return_code: number | null;
  readonly stdout: string | null;
  readonly stderr: string | null;
}

export interface RunCodeResponse {
  readonly status: RunStatus;
  readonly message: string;
  readonly compile_result: CommandRunResult | null;
  readonly run_result: CommandRunResult | null;
  readonly executor_pod_name: string | null;
  readonly files: Readonly<Record<string, string>>;
}

/** One entry of FastAPI's 422 answer: `{"detail": [{type, loc, msg, input}]}`. */
export interface ValidationIssue {
  readonly type: string;
  readonly loc: readonly (string | number)[];
  readonly msg: string;
  readonly input: unknown;
}

/**
 * One phase's result (a compile step, a run) in SandboxFusion's terms: the sandbox's own failure is an
 * Error; a timeout TimeLimitExceeded with no return code; a process killed by a signal reports
 * −signal, as Python's subprocess does (SandboxFusion passes that on), the output cap's kill −9.
 */
export function toCommandResult(r: ExecutionResult): CommandRunResult {
  if (r.sandboxError !== undefined) return { status: 'Error', execution_time: null, return_code: null, stdout: null, stderr: r.sandboxError };
  const time = r.durationMs / 1000;
  if (r.timedOut) return { status: 'TimeLimitExceeded', execution_time: time, return_code: null, stdout: r.stdout, stderr: r.stderr };
  const signal = typeof r.signal === 'number' ? r.signal : r.signal ? (os.constants.signals[r.signal as NodeJS.Signals] ?? 9) : r.outputCapped ? 9 : null;
  return { status: 'Finished', execution_time: time, return_code: r.exitCode ?? (signal !== null ? -signal : -9), stdout: r.stdout, stderr: r.stderr };
}

/** A finished run's answer status (SandboxFusion's parse_run_status: a timeout or a non-zero exit is Failed), and the message when the output cap cut it. */
export function runOutcome(run: CommandRunResult, r: ExecutionResult, outputCapBytes: number): { status: RunStatus; message: string } {
  return {
    status: run.status === 'Finished' && run.return_code === 0 ? 'Success' : 'Failed',
    message: r.outputCapped ? `output passed ${outputCapBytes} bytes: the process was killed and the output cut` : '',
  };
}

const isObj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** A path that stays inside the work directory: relative, no `..` segment, no NUL. */
export function safeRelativePath(p: string): boolean {
  return p !== '' && !p.startsWith('/') && !p.includes('\0') && !p.split(/[\\/]/).includes('..');
}

/** Validates a request body the way SandboxFusion's pydantic model does (defaults filled, unknown keys ignored). */
export function parseRunCodeRequest(body: unknown): { ok: true; request: RunCodeRequest } | { ok: false; detail: ValidationIssue[] } {
  if (!isObj(body))
    return {
      ok: false,
      detail: [{ type: 'model_attributes_type', loc: ['body'], msg: 'Input should be a valid dictionary or object to extract fields from', input: body }],
    };
  const detail: ValidationIssue[] = [];
  const issue = (field: string | (string | number)[], type: string, msg: string, input: unknown): void => {
    detail.push({ type, loc: ['body', ...(Array.isArray(field) ? field : [field])], msg, input });
  };
  const num = (k: string, d: number, int: boolean): number => {
    const v = body[k];
    if (v === undefined) return d;
    if (typeof v !== 'number' || !Number.isFinite(v)) issue(k, int ? 'int_type' : 'float_type', `Input should be a valid ${int ? 'integer' : 'number'}`, v);
    else if (int && !Number.isInteger(v)) issue(k, 'int_from_float', 'Input should be a valid integer, got a number with a fractional part', v);
    else return v;
    return d;
  };
  const compile_timeout = num('compile_timeout', 10, false);
  const run_timeout = num('run_timeout', 10, false);
  const memory_limit_MB = num('memory_limit_MB', -1, true);
  if (body.code === undefined) issue('code', 'missing', 'Field required', body);
  else if (typeof body.code !== 'string') issue('code', 'string_type', 'Input should be a valid string', body.code);
  if (body.stdin !== undefined && body.stdin !== null && typeof body.stdin !== 'string')
    issue('stdin', 'string_type', 'Input should be a valid string', body.stdin);
  if (body.language === undefined) issue('language', 'missing', 'Field required', body);
  else if (!(FUSION_LANGUAGES as readonly unknown[]).includes(body.language)) {
    issue('language', 'literal_error', `Input should be ${FUSION_LANGUAGES.map((l) => `'${l}'`).join(', ')}`, body.language);
  }
  const files: Record<string, string | null> = {};
  if (body.files !== undefined) {
    if (!isObj(body.files)) issue('files', 'dict_type', 'Input should be a valid dictionary', body.files);
    else {
      for (const [k, v] of Object.entries(body.files)) {
        if (v !== null && typeof v !== 'string') issue(['files', k], 'string_type', 'Input should be a valid string', v);
        else if (!safeRelativePath(k)) issue(['files', k], 'value_error', 'File path must be relative to the work directory, without ".."', k);
        else files[k] = v;
      }
    }
  }
  const fetch: string[] = [];
  if (body.fetch_files !== undefined) {
    if (!Array.isArray(body.fetch_files)) issue('fetch_files', 'list_type', 'Input should be a valid list', body.fetch_files);
    else {
      body.fetch_files.forEach((v: unknown, i) => {
        if (typeof v !== 'string') issue(['fetch_files', i], 'string_type', 'Input should be a valid string', v);
        else if (!safeRelativePath(v)) issue(['fetch_files', i], 'value_error', 'File path must be relative to the work directory, without ".."', v);
        else fetch.push(v);
      });
    }
  }
  if (detail.length) return { ok: false, detail };
  return {
    ok: true,
    request: {
      compile_timeout,
      run_timeout,
      memory_limit_MB,
      code: body.code as string,
      stdin: (body.stdin as string | null | undefined) ?? null,
      language: body.language as FusionLanguage,
      files,
      fetch_files: fetch,
    },
  };
}
