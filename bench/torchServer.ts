// The PyTorch side of the benches: bench/torch_baseline.py as a server (one per dtype), so a bench can
// interleave it with our own side round by round without paying its load and warm-up each time; it
// runs under `/usr/bin/time -v`, whose peak RSS and CPU time `quit` returns. Two builds: Debian's
// PyTorch 1.13 (/usr/bin/python3) and 2.15 from PyPI (scripts/torchVenv.mjs's cached venv); dtypes
// float32, bfloat16 and, for sampling only, dynamic int8. Also the statistics the benches share:
// medians, and ratios as the median of per-round ratios with their spread.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { pathToFileURL } from 'node:url';

const PYTHON = '/usr/bin/python3';
const ROOT = path.join(__dirname, '..', '..');
export const DTYPES = ['float32', 'bfloat16'] as const;
export type Dtype = (typeof DTYPES)[number];
/** What a server computes in: the float dtypes, or dynamic int8 (sampling and top-5 only: no backward). */
export type TorchDtype = Dtype | 'int8';
/** Debian's python3-torch (1.13) or PyPI's torch 2.15 in the cached venv. */
export type TorchBuild = 'debian' | 'pypi';

/**
 * The interpreter of a build: Debian's python3, or the PyPI venv's (made on first use, ~4 GB and
 * ~3 min; cached under ~/.cache/agent-rl-workbench/venvs). Throws naming the fix when it cannot be made.
 */
export async function torchPython(build: TorchBuild): Promise<string> {
  if (build === 'debian') return PYTHON;
  const venv = (await import(pathToFileURL(path.join(ROOT, 'scripts', 'torchVenv.mjs')).href)) as { ensureTorchVenv: () => string };
  return venv.ensureTorchVenv();
}

export interface SampleTimes {
  seconds: number;
  prefill_seconds: number;
  decode_seconds: number;
}
export interface TrainTimes {
  seconds: number;
  reference_seconds: number;
}
export interface Ready {
  torch: string;
  threads: number;
  dtype: TorchDtype;
  blas: string;
  cpu_bf16: boolean;
  /** 'scaled_dot_product_attention' (PyTorch 2.5 on) or 'two products'. */
  attention?: string;
  /** GFLOP/s of an n² product in the server's dtype (int8: a dynamic int8 Linear(n, n) on n rows). */
  probe: Record<'512' | '1024', number>;
  /** int8: the quantized engine chosen, and each one's GFLOP/s on [12 | 512, 896] × [896, 4864]. */
  int8_engine?: string;
  int8_engines?: Record<string, Record<'12' | '512', number>>;
}
export interface ServerOptions {
  readonly dir: string;
  readonly threads: number;
  /** Sequences per training step, of [tokens, trained from] each, in micro-batches of `micro` (default 2). */
  readonly sequences: number;
  readonly micro?: number;
  readonly train: readonly [number, number];
  /** Rows, prompt tokens, new tokens. */
  readonly sample: readonly [number, number, number];
}

/** Below this GFLOP/s per thread a float32 product runs on the reference BLAS: no baseline. */
export const REFERENCE_BLAS_GFLOPS = 20;

export class TorchServer {
  private readonly lines: AsyncIterator<string>;
  private stderr = '';
  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    readonly dtype: TorchDtype,
    readonly options: ServerOptions,
    private readonly python: string,
  ) {
    child.stderr.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  }

  /** Starts a server and waits until it has loaded the model, probed the machine and warmed up. */
  static async start(dtype: TorchDtype, o: ServerOptions, python = PYTHON): Promise<{ server: TorchServer; ready: Ready }> {
    if (!fs.existsSync(python))
      throw new Error(`no ${python}: the PyTorch side needs Debian's python3-torch (apt-get install python3-torch libopenblas0-pthread)`);
    const script = path.join(ROOT, 'bench', 'torch_baseline.py');
    const child = spawn('/usr/bin/time', ['-v', python, script, JSON.stringify({ ...o, dtype })], {
      env: {
        ...process.env,
        // one thread count for every pool: PyTorch's (OpenMP), OpenBLAS's (Debian's build), MKL's (PyPI's)
        OPENBLAS_NUM_THREADS: String(o.threads),
        OMP_NUM_THREADS: String(o.threads),
        MKL_NUM_THREADS: String(o.threads),
      },
    });
    const server = new TorchServer(child, dtype, o, python);
    return { server, ready: (await server.next()) as unknown as Ready };
  }

  private async next(): Promise<Record<string, unknown>> {
    const r = await this.lines.next();
    if (r.done) {
      const err = this.stderr.trim().split('\n');
      const cause = err.find((l) => /Error|error:/.test(l)) ?? err.slice(-3).join(' ');
      throw new Error(
        /No module named 'torch'/.test(this.stderr)
          ? 'python3-torch is not installed (apt-get install python3-torch libopenblas0-pthread)'
          : `PyTorch server failed: ${cause}`,
      );
    }
    return JSON.parse(r.value) as Record<string, unknown>;
  }

  /** "sample", "train" or "top5 [ids…]": its answer. */
  async run<R>(cmd: string): Promise<R> {
    this.child.stdin.write(`${cmd}\n`);
    return (await this.next()) as R;
  }

  /**
   * A fresh server in place of this one (loaded, probed and warmed up again, untimed): a training step
   * leaves PyTorch's process holding its peak (glibc keeps what was freed, even after malloc_trim),
   * and two servers beside the engine then exhaust this machine's 24 GiB. Returns this one's usage.
   */
  async restart(): Promise<{ next: TorchServer; usage: { rssBytes: number; cpuSeconds: number } }> {
    const usage = await this.quit();
    return { next: (await TorchServer.start(this.dtype, this.options, this.python)).server, usage };
  }

  /** Quits and returns `time -v`'s peak RSS and CPU seconds. */
  async quit(): Promise<{ rssBytes: number; cpuSeconds: number }> {
    this.child.stdin.end('quit\n');
    await new Promise((res) => this.child.once('close', res));
    const field = (name: string): number => Number(new RegExp(`${name}[^:]*:\\s*([\\d.]+)`).exec(this.stderr)?.[1] ?? NaN);
    return { rssBytes: field('Maximum resident set size') * 1024, cpuSeconds: field('User time') + field('System time') };
  }
}

/** One server per dtype, started one after the other so each probe and warm-up runs alone. */
export async function startTorch(o: ServerOptions): Promise<Record<Dtype, { server: TorchServer; ready: Ready }>> {
  const out = {} as Record<Dtype, { server: TorchServer; ready: Ready }>;
  for (const d of DTYPES) out[d] = await TorchServer.start(d, o);
  return out;
}

/** What the servers run on, their probes, and whether float32 is a real baseline (else why not). */
export function describeTorch(torch: Record<Dtype, { ready: Ready }>, threads: number): { text: string; baseline: boolean } {
  return describeReady(
    torch.float32.ready,
    DTYPES.map((d) => torch[d].ready),
    threads,
  );
}

/**
 * describeTorch for any set of one build's servers, `f32` its float32 one; `blasCheck` false where
 * float32 cannot be on a reference BLAS (PyPI's build links MKL).
 */
export function describeReady(f32: Ready, all: readonly Ready[], threads: number, blasCheck = true): { text: string; baseline: boolean } {
  const lines = [
    `PyTorch ${f32.torch}, ${f32.threads} threads (OpenBLAS, MKL and OpenMP set to ${threads}); BLAS: ${f32.blas}; CPU bfloat16 dot: ${f32.cpu_bf16 ? 'yes' : 'no'}` +
      (f32.attention ? `; attention: ${f32.attention}` : ''),
  ];
  for (const r of all) {
    lines.push(`  probe ${r.dtype}: ${r.probe['512'].toFixed(1)} GFLOP/s on a 512² product, ${r.probe['1024'].toFixed(1)} on 1,024²`);
    if (r.int8_engines) {
      const each = Object.entries(r.int8_engines).map(([e, g]) => `${e} ${g['12'].toFixed(1)} / ${g['512'].toFixed(1)}`);
      lines.push(
        `    int8 quantized engines, GFLOP/s at 12 / 512 rows of [896] × [896, 4864]: ${each.join(', ')}; used: ${r.int8_engine} (the fastest at 512 rows)`,
      );
    }
  }
  const baseline = !blasCheck || f32.probe['512'] >= REFERENCE_BLAS_GFLOPS * threads;
  if (!baseline) lines.push('  float32 is on a reference BLAS, not a baseline: no ratio printed. Fix: apt-get install libopenblas0-pthread');
  return { text: lines.join('\n'), baseline };
}

export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** Per-round speed ratios of `ours` over `theirs` from their seconds (theirs[i] / ours[i]). */
export const speedups = (oursSeconds: readonly number[], theirsSeconds: readonly number[]): number[] => oursSeconds.map((s, i) => theirsSeconds[i]! / s);

/** The median ratio with its spread over the rounds: "1.23× (1.10–1.31)". */
export function ratioText(oursSeconds: readonly number[], theirsSeconds: readonly number[]): string {
  const r = speedups(oursSeconds, theirsSeconds);
  return `${median(r).toFixed(2)}× (${Math.min(...r).toFixed(2)}–${Math.max(...r).toFixed(2)})`;
}
