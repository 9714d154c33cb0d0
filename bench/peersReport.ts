// bench/peers.ts's figures from its runs: per round each side's median seconds per step (the whole step,
// generation, and the rest: scoring, reference and old log-probs, optimizer steps), the ratio TRL /
// workbench per round, and the median ratio with its spread (min–max) over rounds; held-out greedy pass@1
// per round and its mean. Targets: the median ratio of whole steps above 1, the workbench's mean pass@1 at
// least TRL's, every verl check passed.

export interface PeerStep {
  /** Seconds of the whole step (evaluation left out). */
  readonly seconds: number;
  /** Seconds of it spent generating (sampling the completions). */
  readonly generateSeconds: number;
  readonly rewardMean: number;
}

export interface PeerRun {
  readonly side: 'workbench' | 'trl';
  readonly round: number;
  readonly steps: readonly PeerStep[];
  /** Held-out greedy pass@1 after the steps (0–1). */
  readonly greedyPassAt1: number;
  /** The workbench's evaluation of the starting checkpoint (its iteration 0). */
  readonly warmStartPassAt1?: number;
}

export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

export interface PeersSummary {
  /** TRL / workbench seconds per step: whole, generation, the rest. */
  readonly ratio: { readonly step: Spread; readonly generate: Spread; readonly rest: Spread };
  /** Median over rounds of each side's median seconds per step. */
  readonly seconds: Record<'workbench' | 'trl', { readonly step: number; readonly generate: number; readonly rest: number }>;
  readonly passAt1: Record<'workbench' | 'trl', { readonly mean: number; readonly rounds: number[] }>;
  readonly warmStartPassAt1?: number;
  readonly rounds: number;
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

const spread = (xs: readonly number[]): Spread => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });

/** A run's median seconds per step: whole, generation, rest. */
function perStep(run: PeerRun): { step: number; generate: number; rest: number } {
  return {
    step: median(run.steps.map((s) => s.seconds)),
    generate: median(run.steps.map((s) => s.generateSeconds)),
    rest: median(run.steps.map((s) => s.seconds - s.generateSeconds)),
  };
}

const pct = (v: number): string => `${(100 * v).toFixed(1)}%`;
const ratio = (s: Spread): string => `${s.median.toFixed(2)}× (${s.min.toFixed(2)}–${s.max.toFixed(2)})`;

/** The summary and its printed lines; throws when a round lacks one of the sides. */
export function describeRounds(runs: readonly PeerRun[], steps: number): { summary: PeersSummary; lines: string[] } {
  const rounds = [...new Set(runs.map((r) => r.round))].sort((a, b) => a - b);
  const pairs = rounds.map((round) => {
    const find = (side: PeerRun['side']): PeerRun => {
      const r = runs.find((x) => x.round === round && x.side === side);
      if (!r) throw new Error(`round ${round + 1}: no ${side} run`);
      return r;
    };
    return { wb: find('workbench'), trl: find('trl') };
  });
  const wb = pairs.map((p) => perStep(p.wb)),
    trl = pairs.map((p) => perStep(p.trl));
  const of = (k: 'step' | 'generate' | 'rest') => spread(pairs.map((_, i) => trl[i]![k] / wb[i]![k]));
  const sideSeconds = (xs: typeof wb) => ({
    step: median(xs.map((x) => x.step)),
    generate: median(xs.map((x) => x.generate)),
    rest: median(xs.map((x) => x.rest)),
  });
  const passes = (side: 'wb' | 'trl') => pairs.map((p) => p[side].greedyPassAt1);
  const mean = (xs: number[]) => xs.reduce((x, y) => x + y, 0) / xs.length;
  const summary: PeersSummary = {
    ratio: { step: of('step'), generate: of('generate'), rest: of('rest') },
    seconds: { workbench: sideSeconds(wb), trl: sideSeconds(trl) },
    passAt1: { workbench: { mean: mean(passes('wb')), rounds: passes('wb') }, trl: { mean: mean(passes('trl')), rounds: passes('trl') } },
    ...(pairs[0]?.wb.warmStartPassAt1 !== undefined ? { warmStartPassAt1: pairs[0].wb.warmStartPassAt1 } : {}),
    rounds: pairs.length,
  };
  const s = summary.seconds;
  const lines = [
    `seconds per step (median over rounds of each run's median step): workbench ${s.workbench.step.toFixed(3)} s, TRL ${s.trl.step.toFixed(3)} s`,
    `  TRL / workbench per step: ${ratio(summary.ratio.step)} over ${pairs.length} rounds`,
    `  generation: workbench ${s.workbench.generate.toFixed(3)} s, TRL ${s.trl.generate.toFixed(3)} s: ${ratio(summary.ratio.generate)}`,
    `  the rest (scoring, reference and old log-probs, optimizer steps): workbench ${s.workbench.rest.toFixed(3)} s, TRL ${s.trl.rest.toFixed(3)} s: ${ratio(summary.ratio.rest)}`,
    `held-out greedy pass@1 after ${steps} steps (200 expressions)${summary.warmStartPassAt1 !== undefined ? `, from the warm start's ${pct(summary.warmStartPassAt1)}` : ''}: workbench ${pct(summary.passAt1.workbench.mean)} (rounds ${summary.passAt1.workbench.rounds.map(pct).join(', ')}), TRL ${pct(summary.passAt1.trl.mean)} (rounds ${summary.passAt1.trl.rounds.map(pct).join(', ')})`,
  ];
  return { summary, lines };
}

/** The targets' verdicts. */
export function peersTargets(report: { summary: PeersSummary }, verlChecks: readonly { ok: boolean }[]): { met: boolean; lines: string[] } {
  const r = report.summary;
  const faster = r.ratio.step.median > 1;
  const noWorse = r.passAt1.workbench.mean >= r.passAt1.trl.mean;
  const verl = verlChecks.length > 0 && verlChecks.every((c) => c.ok);
  const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
  return {
    met: faster && noWorse && verl,
    lines: [
      `target: the workbench faster per step (median TRL / workbench > 1) — ${verdict(faster)}`,
      `target: no worse held out (mean greedy pass@1 ≥ TRL's) — ${verdict(noWorse)}`,
      `target: verl reads the export (every check above) — ${verdict(verl)}`,
    ],
  };
}
