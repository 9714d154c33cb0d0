// A trajectory's per-token numbers as the views read them: the learner's columns (TokenStats, sent as
// JSON: NaN and ±Infinity arrive as null) placed on the turns' generated tokens, with the behaviour
// log-prob and the train–inference mismatch beside them. Pure: the backend sorts worst tokens with it,
// the inspector draws its heat map with it.

/** The learner's columns as JSON (TokenStats with plain arrays; null = not finite). */
export interface TokenStatsJson {
  readonly stepsBefore: number;
  readonly old: 'behaviour' | 'recomputed';
  /** Versions of lag (async): above 0 no mismatch is reported. */
  readonly lag: number;
  readonly before?: readonly (number | null)[];
  readonly logp: readonly (number | null)[];
  readonly ratio: readonly (number | null)[];
  readonly clipSide: readonly number[];
  readonly entropy: readonly (number | null)[];
  readonly kl?: readonly (number | null)[];
  /** A distillation teacher's log-prob of each trained token, and log π_student − log π_teacher there (both or neither). */
  readonly teacher?: readonly (number | null)[];
  readonly reverseKl?: readonly (number | null)[];
}

/** One generated token with everything known about it (undefined: not recorded for this token). */
export interface TokenRow {
  /** Index of the turn, and of the token among the turn's generated tokens. */
  readonly turn: number;
  readonly token: number;
  readonly id: number;
  /** Log-prob when sampled. */
  readonly behaviour: number;
  /** Trained on (loss mask 1) with numbers from the update; false for a demonstration's mistake or a token past the context window. */
  readonly trained: boolean;
  /** The row is the turn's whole action (a table policy, or a scored candidate): one trained position per turn. */
  readonly action?: boolean;
  readonly before?: number;
  /** before − behaviour: the train–inference mismatch of the token. */
  readonly mismatch?: number;
  readonly logp?: number;
  readonly ratio?: number;
  /** 'none' | 'low' | 'high' | 'dual' */
  readonly clip?: ClipSide;
  readonly entropy?: number;
  readonly kl?: number;
  /** log π_teacher of the token (a distillation teacher scored it). */
  readonly teacher?: number;
  /** log π_student − log π_teacher: the per-token reverse-KL term (its advantage was the trajectory's − w × it). */
  readonly reverseKl?: number;
}

export type ClipSide = 'none' | 'low' | 'high' | 'dual';
const SIDES: readonly ClipSide[] = ['none', 'low', 'high', 'dual'];

/** The columns a view can colour by or sort by, with what each means. */
export const TOKEN_COLUMNS = {
  behaviour: 'log-prob when sampled',
  before: 'training log-prob before the update',
  mismatch: 'training − sampling log-prob (train–inference mismatch)',
  ratio: 'π / π_old at the token’s first step',
  clip: 'which clip held the token',
  entropy: 'entropy of the token’s distribution (nats)',
  kl: 'KL estimate to the reference',
  teacher: 'the teacher’s log-prob',
  reverseKl: 'student − teacher log-prob (reverse KL term)',
} as const;
export type TokenColumn = keyof typeof TOKEN_COLUMNS;

/** What a worst-token list sorts by: |mismatch|, |log ratio|, KL, or |student − teacher log-prob|. */
export type WorstBy = 'mismatch' | 'logRatio' | 'kl' | 'reverseKl';

const num = (x: unknown): number | undefined => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);

/** A stored turn's generated tokens, or its one action (its policy record is untrusted: anything malformed counts as none). */
function generated(policy: unknown): { ids: number[]; logprobs: number[]; imitate: boolean; action: boolean } | undefined {
  if (typeof policy !== 'object' || policy === null) return undefined;
  const p = policy as Record<string, unknown>;
  // a chosen action index means one trained position per turn (the table; a scored candidate, whose
  // stored tokens are the candidate's text, not what was sampled token by token)
  const index = num(p.actionIndex);
  const lp = num(p.behaviourLogprob);
  if (index !== undefined) return lp === undefined ? undefined : { ids: [index], logprobs: [lp], imitate: true, action: true };
  const tk = p.tokens as Record<string, unknown> | undefined;
  if (typeof tk === 'object' && tk !== null && Array.isArray(tk.sampled)) {
    const ids = tk.sampled.map((x) => num(x) ?? -1);
    const lps = Array.isArray(tk.logprobs) ? tk.logprobs : [];
    return { ids, logprobs: ids.map((_, i) => num(lps[i]) ?? 0), imitate: tk.imitate !== false, action: false };
  }
  return undefined;
}

/**
 * Every generated token of the turns, in order, with the learner's numbers on the trained ones (the
 * k-th trained position is the k-th generated token of an imitated turn; a sequence cut at the context
 * window has fewer, so later tokens carry none).
 */
export function tokenRows(turns: readonly { readonly policy: unknown }[], stats: TokenStatsJson | undefined): TokenRow[] {
  const rows: TokenRow[] = [];
  let k = 0;
  const n = stats?.logp.length ?? 0;
  turns.forEach((turn, ti) => {
    const g = generated(turn.policy);
    if (!g) return;
    g.ids.forEach((id, i) => {
      const behaviour = g.logprobs[i]!;
      const action = g.action ? { action: true } : {};
      if (!stats || !g.imitate || k >= n) {
        rows.push({ turn: ti, token: i, id, behaviour, trained: false, ...action });
        return;
      }
      const before = num(stats.before?.[k]);
      // with lag the difference is the policy's movement since it sampled, not a train–inference mismatch
      const mismatch = before !== undefined && stats.lag === 0 ? { mismatch: before - behaviour } : {};
      const side = SIDES[stats.clipSide[k] ?? 0] ?? 'none';
      const kl = num(stats.kl?.[k]);
      const logp = num(stats.logp[k]);
      const ratio = num(stats.ratio[k]);
      const entropy = num(stats.entropy[k]);
      const teacher = num(stats.teacher?.[k]);
      const reverseKl = num(stats.reverseKl?.[k]);
      rows.push({
        turn: ti,
        token: i,
        id,
        behaviour,
        trained: true,
        ...action,
        ...(before !== undefined ? { before } : {}),
        ...mismatch,
        ...(logp !== undefined ? { logp } : {}),
        ...(ratio !== undefined ? { ratio } : {}),
        clip: side,
        ...(entropy !== undefined ? { entropy } : {}),
        ...(kl !== undefined ? { kl } : {}),
        ...(teacher !== undefined ? { teacher } : {}),
        ...(reverseKl !== undefined ? { reverseKl } : {}),
      });
      k += 1;
    });
  });
  return rows;
}

/** How bad a token is by `by` (larger is worse; undefined when the token has no such number). */
export function badness(r: TokenRow, by: WorstBy): number | undefined {
  if (by === 'mismatch') return r.mismatch === undefined ? undefined : Math.abs(r.mismatch);
  if (by === 'logRatio') return r.ratio === undefined || r.ratio <= 0 ? undefined : Math.abs(Math.log(r.ratio));
  if (by === 'reverseKl') return r.reverseKl === undefined ? undefined : Math.abs(r.reverseKl);
  return r.kl;
}

/** The `limit` worst tokens of `rows` by `by`, worst first. */
export function worstRows(rows: readonly TokenRow[], by: WorstBy, limit: number): TokenRow[] {
  return rows
    .map((r) => ({ r, v: badness(r, by) }))
    .filter((x): x is { r: TokenRow; v: number } => x.v !== undefined)
    .sort((a, b) => b.v - a.v)
    .slice(0, limit)
    .map((x) => x.r);
}

/** A histogram of values into `bins` equal bins over [0, max] (the last bin holds max). */
export function histogram(values: readonly number[], bins: number): { edges: number[]; counts: number[] } {
  const max = values.reduce((m, v) => Math.max(m, v), 0);
  const width = max > 0 ? max / bins : 1;
  const counts = new Array<number>(bins).fill(0);
  for (const v of values) counts[Math.min(bins - 1, Math.floor(v / width))]! += 1;
  return { edges: Array.from({ length: bins + 1 }, (_, i) => i * width), counts };
}
