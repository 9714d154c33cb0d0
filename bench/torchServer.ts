// The PyTorch side of the benches: bench/torch_baseline.py as a server (one per dtype), so a bench can
// interleave it with our own side round by round without paying its load and warm-up each time; it
// runs under `/usr/bin/time -v`, whose peak RSS and CPU time `quit` returns. Also the statistics the
// benches share: medians, and ratios as the median of per-round ratios with their spread.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';

const PYTHON = '/usr/bin/python3';
export const DTYPES = ['float32', 'bfloat16'] as const;
export type Dtype = (typeof DTYPES)[number];

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
  dtype: Dtype;
  blas: string;
  cpu_bf16: boolean;
  probe: Record<'512' | '1024', number>;
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
    readonly dtype: Dtype,
    readonly options: ServerOptions,
  ) {
    child.stderr.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  }

  /** Starts a server and waits until it has loaded the model, probed the machine and warmed up. */
  static async start(dtype: Dtype, o: ServerOptions): Promise<{ server: TorchServer; ready: Ready }> {
    if (!fs.existsSync(PYTHON))
      throw new Error(`no ${PYTHON}: the PyTorch side needs Debian's python3-torch (apt-get install python3-torch libopenblas0-pthread)`);
    const script = path.join(__dirname, '..', '..', 'bench', 'torch_baseline.py');
    const child = spawn('/usr/bin/time', ['-v', PYTHON, script, JSON.stringify({ ...o, dtype })], {
      env: {
        ...process.env,
        OPENBLAS_NUM_THREADS: String(o.threads),
        OMP_NUM_THREADS: String(o.threads),
      },
    });
    const server = new TorchServer(child, dtype, o);
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
    return { next: (await TorchServer.start(this.dtype, this.options)).server, usage };
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
  const f32 = torch.float32.ready;
  const lines = [
    `PyTorch ${f32.torch}, ${f32.threads} threads (OpenBLAS and OpenMP set to ${threads}); BLAS: ${f32.blas}; CPU bfloat16 dot: ${f32.cpu_bf16 ? 'yes' : 'no'}`,
  ];
  for (const d of DTYPES)
    lines.push(`  probe ${d}: ${torch[d].ready.probe['512'].toFixed(1)} GFLOP/s on a 512² product, ${torch[d].ready.probe['1024'].toFixed(1)} on 1,024²`);
  const baseline = f32.probe['512'] >= REFERENCE_BLAS_GFLOPS * threads;
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
