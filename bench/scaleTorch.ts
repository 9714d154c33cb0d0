// The PyTorch sides of bench/seed000Scale.ts: Debian's PyTorch 1.13 and PyPI's 2.15 (scripts/torchVenv.mjs),
// each in float32, bfloat16 and dynamic int8 (torch_baseline.py; int8 samples only: its quantized modules
// have no backward). One server alive at a time — started for its turn in a round (load, probe, warm-up:
// untimed), then sampling, training, quit — since a float32 training step alone peaks near 14 GiB here
// and the two engines stay resident beside it.
import {
  describeReady,
  TorchServer,
  torchPython,
  type Ready,
  type SampleTimes,
  type ServerOptions,
  type TorchBuild,
  type TorchDtype,
  type TrainTimes,
} from './torchServer';

export const TORCH_BUILDS: readonly TorchBuild[] = ['debian', 'pypi'];
export const TORCH_DTYPES: readonly TorchDtype[] = ['float32', 'bfloat16', 'int8'];

export interface TorchSide {
  readonly build: TorchBuild;
  readonly dtype: TorchDtype;
  readonly python: string;
  /** The first server's ready line (versions, probes, the int8 engine). */
  ready?: Ready;
  readonly sample: SampleTimes[];
  /** Empty for int8. */
  readonly train: TrainTimes[];
  /** Largest peak RSS (bytes) over its servers, and the CPU seconds of all of them (`time -v`). */
  rssBytes: number;
  cpuSeconds: number;
  /** The last server's peak RSS (bytes, `time -v`): the bench prints it with its own memory at each turn. */
  lastRssBytes?: number;
}

/** "PyTorch 2.15 bfloat16" (the version from the server once one ran, else the build's name). */
export function sideLabel(s: TorchSide): string {
  const version = s.ready ? (/^\d+\.\d+/.exec(s.ready.torch)?.[0] ?? s.ready.torch) : s.build === 'debian' ? "Debian's" : "PyPI's";
  return `PyTorch ${version} ${s.dtype}`;
}

/**
 * Every build × dtype whose interpreter is there (PyPI's venv made on first use); a build that cannot
 * be had is named in `missing` with why, and the bench says that its baseline lacks it.
 */
export async function torchSides(): Promise<{ sides: TorchSide[]; missing: string[] }> {
  const sides: TorchSide[] = [],
    missing: string[] = [];
  for (const build of TORCH_BUILDS) {
    let python: string;
    try {
      python = await torchPython(build);
    } catch (e) {
      missing.push(`${build}: ${e instanceof Error ? e.message : String(e)}`);
      continue;
    }
    for (const dtype of TORCH_DTYPES) sides.push({ build, dtype, python, sample: [], train: [], rssBytes: 0, cpuSeconds: 0 });
  }
  return { sides, missing };
}

/**
 * One round of a side: a fresh server, its base model's top-5 next tokens after `top5` when given,
 * one sampling and (float dtypes) one training step, then quit; returns the top-5 (or undefined).
 */
export async function torchRound(side: TorchSide, o: ServerOptions, top5?: readonly number[]): Promise<number[] | undefined> {
  const { server, ready } = await TorchServer.start(side.dtype, o, side.python);
  side.ready ??= ready;
  let top: number[] | undefined;
  try {
    if (top5) top = (await server.run<{ top5: number[] }>(`top5 ${JSON.stringify(top5)}`)).top5;
    side.sample.push(await server.run<SampleTimes>('sample'));
    if (side.dtype !== 'int8') side.train.push(await server.run<TrainTimes>('train'));
  } finally {
    const usage = await server.quit();
    side.rssBytes = Math.max(side.rssBytes, usage.rssBytes);
    side.lastRssBytes = usage.rssBytes;
    side.cpuSeconds += usage.cpuSeconds;
  }
  return top;
}

/** Each build's versions, BLAS, attention and probes; `baseline` false when Debian's float32 runs on a reference BLAS. */
export function describeSides(sides: readonly TorchSide[], threads: number): { text: string; baseline: boolean } {
  const texts: string[] = [];
  let baseline = true;
  for (const build of TORCH_BUILDS) {
    const mine = sides.filter((s) => s.build === build && s.ready);
    const f32 = mine.find((s) => s.dtype === 'float32')?.ready;
    if (!f32) continue;
    const d = describeReady(
      f32,
      mine.map((s) => s.ready!),
      threads,
      build === 'debian',
    );
    texts.push(d.text);
    baseline &&= d.baseline;
  }
  return { text: texts.join('\n'), baseline };
}
