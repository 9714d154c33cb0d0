// Tokenizers. Token ids are produced once, when text enters a context, and never rebuilt from decoded
// text (token in, token out).
export interface Tokenizer {
  readonly vocabSize: number;
  encode(text: string): number[];
  decode(ids: readonly number[]): string;
  /** Serialisable description, stored in checkpoints. */
  toJSON(): { kind: string; [k: string]: unknown };
}

/**
 * Character-level tokenizer for small models trained here: printable ASCII (32–126), newline and
 * tab, plus one id for any other character (decoded as U+FFFD). 96 ids by default.
 */
export class CharTokenizer implements Tokenizer {
  private readonly index = new Map<string, number>();
  readonly vocabSize: number;
  static readonly UNKNOWN = '\uFFFD';

  constructor(readonly chars: readonly string[] = CharTokenizer.defaultChars()) {
    chars.forEach((c, i) => this.index.set(c, i));
    this.vocabSize = chars.length + 1; // last id = unknown
  }

  static defaultChars(): string[] {
    const out = ['\n', '\t'];
    for (let c = 32; c < 127; c++) out.push(String.fromCharCode(c));
    return out; // 97 characters → vocab 98; models may round up
  }

  encode(text: string): number[] {
    const ids: number[] = [];
    for (const ch of text) ids.push(this.index.get(ch) ?? this.chars.length);
    return ids;
  }

  decode(ids: readonly number[]): string {
    return ids.map((i) => this.chars[i] ?? CharTokenizer.UNKNOWN).join('');
  }

  toJSON(): { kind: string; chars: readonly string[] } {
    return { kind: 'char', chars: this.chars };
  }
}

export function tokenizerFromJSON(json: { kind: string; [k: string]: unknown }): Tokenizer {
  if (json.kind === 'char' && Array.isArray(json.chars)) return new CharTokenizer(json.chars as string[]);
  throw new Error(`unknown tokenizer kind ${JSON.stringify(json.kind)} in checkpoint`);
}
