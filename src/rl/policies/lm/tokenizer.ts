// Tokenizers. Token ids are produced once, when text enters a context, and never rebuilt from decoded
// text (token in, token out). Hugging Face tokenizers, loaded from a directory holding tokenizer.json
// (and tokenizer_config.json); the character vocabulary of the small models trained here is written as
// such a tokenizer.json too (every character one token).
import * as fs from 'node:fs';
import * as path from 'node:path';
export interface Tokenizer {
  readonly vocabSize: number;
  encode(text: string): number[];
  decode(ids: readonly number[]): string;
  /** Ids of control tokens (end of turn, padding, …): never part of an action's text. */
  specialIds?(): number[];
  /** Serialisable description, stored in checkpoints. */
  toJSON(): { kind: string; [k: string]: unknown };
}

/** The character vocabulary's characters, in id order: newline, tab, printable ASCII (the character tokenizer's since the first small models). */
export function characterVocabulary(): string[] {
  const out = ['\n', '\t'];
  for (let c = 32; c < 127; c++) out.push(String.fromCharCode(c));
  return out;
}

const UNK = '<unk>';
const EOS = '<|endoftext|>';

/**
 * A character-level tokenizer.json: every character of `chars` one token (ids in order), then <unk>
 * for any other character, <|endoftext|>, and reserved special tokens up to a multiple of 8 ids (the
 * engine's products read the vocabulary in blocks; every id decodes to something).
 */
export function characterTokenizer(chars: readonly string[] = characterVocabulary()): {
  tokenizer: Record<string, unknown>;
  config: Record<string, unknown>;
  size: number;
} {
  const vocab: Record<string, number> = {};
  chars.forEach((c, i) => (vocab[c] = i));
  const specials = [UNK, EOS];
  while ((chars.length + specials.length) % 8 !== 0) specials.push(`<|reserved_${specials.length - 2}|>`);
  const added = specials.map((content, k) => ({
    id: chars.length + k,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  }));
  vocab[UNK] = chars.length;
  const tokenizer = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: null,
    post_processor: null,
    decoder: { type: 'Fuse' },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: UNK,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: [],
    },
  };
  const config = {
    tokenizer_class: 'PreTrainedTokenizerFast',
    unk_token: UNK,
    eos_token: EOS,
    pad_token: EOS,
    bos_token: null,
    model_max_length: 1_000_000,
    clean_up_tokenization_spaces: false,
    added_tokens_decoder: Object.fromEntries(added.map((t) => [String(t.id), { ...t, id: undefined }])),
  };
  return { tokenizer, config, size: chars.length + specials.length };
}

interface HfImpl {
  encode(text: string): number[];
  decode(ids: number[]): string;
  /** The chat template applied to messages (only @huggingface/transformers renders templates). */
  render?(messages: readonly ChatMessage[], o: ChatRenderOptions): string;
}

export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  readonly content: string;
  /** An assistant message's calls, as chat templates read them (arguments an object where they parse). */
  readonly tool_calls?: readonly {
    readonly id?: string;
    readonly type: 'function';
    readonly function: { readonly name: string; readonly arguments: unknown };
  }[];
  readonly tool_call_id?: string;
  readonly name?: string;
}

export interface ChatRenderOptions {
  readonly addGenerationPrompt: boolean;
  readonly tools?: readonly Readonly<Record<string, unknown>>[];
  /** More template variables (policyOptions.chatTemplateVariables, e.g. { enable_thinking: false }). */
  readonly variables?: Readonly<Record<string, unknown>>;
}

/** Special-token variables a chat template reads (transformers passes the same ones). */
const TEMPLATE_TOKENS = ['bos_token', 'eos_token', 'unk_token', 'sep_token', 'pad_token', 'cls_token', 'mask_token'] as const;

/**
 * A chat template rendered with @huggingface/jinja, the engine @huggingface/transformers renders with,
 * given the same variables (messages, add_generation_prompt, tools, the special tokens): where
 * transformers does not load (the .vsix leaves ONNX Runtime out) the text is the same.
 */
export function renderChatTemplate(template: string, config: Record<string, unknown>, messages: readonly ChatMessage[], o: ChatRenderOptions): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Template } = require('@huggingface/jinja') as { Template: new (t: string) => { render(vars: Record<string, unknown>): string } };
  const special: Record<string, string> = {};
  for (const key of TEMPLATE_TOKENS) {
    const v = config[key];
    const text = typeof v === 'string' ? v : (v as { content?: unknown } | null | undefined)?.content;
    if (typeof text === 'string' && text !== '') special[key] = text;
  }
  // as transformers passes them: tools and documents null when absent (templates test `is not none`)
  return new Template(template).render({
    ...(o.variables ?? {}),
    messages,
    add_generation_prompt: o.addGenerationPrompt,
    tools: o.tools ?? null,
    documents: null,
    ...special,
  });
}

/** The library that tokenizes: @huggingface/transformers, else its own pure-JS tokenizer library. */
function loadHfLibrary(): { library: string; make: (json: object, config: object) => HfImpl } {
  const errors: string[] = [];
  try {
    // @huggingface/transformers loads ONNX Runtime with it; the .vsix leaves that out (.vscodeignore).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { PreTrainedTokenizer } = require('@huggingface/transformers') as {
      PreTrainedTokenizer: new (
        json: object,
        config: object,
      ) => {
        encode(text: string, o: object): number[];
        decode(ids: number[], o: object): string;
        apply_chat_template(messages: readonly object[], o: object): string;
      };
    };
    return {
      library: '@huggingface/transformers',
      make: (json, config) => {
        const t = new PreTrainedTokenizer(json, config);
        return {
          encode: (text) => t.encode(text, { add_special_tokens: false }),
          decode: (ids) => t.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false }),
          render: (messages, o) =>
            t.apply_chat_template(messages, {
              ...(o.variables ?? {}),
              tokenize: false,
              add_generation_prompt: o.addGenerationPrompt,
              ...(o.tools ? { tools: o.tools } : {}),
            }),
        };
      },
    };
  } catch (e) {
    errors.push(`@huggingface/transformers: ${(e as Error).message.split('\n')[0]}`);
  }
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { Tokenizer } = require('@huggingface/tokenizers') as {
      Tokenizer: new (json: object, config: object) => { encode(text: string, o: object): { ids: number[] }; decode(ids: number[], o: object): string };
    };
    return {
      library: '@huggingface/tokenizers',
      make: (json, config) => {
        const t = new Tokenizer(json, config);
        const cfg = config as Record<string, unknown>;
        return {
          encode: (text) => t.encode(text, { add_special_tokens: false }).ids,
          decode: (ids) => t.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false }),
          ...(chatTemplateOf(cfg)
            ? {
                render: (messages: readonly ChatMessage[], o: ChatRenderOptions) =>
                  renderChatTemplate(chatTemplateOf(cfg, o.tools !== undefined)!, cfg, messages, o),
              }
            : {}),
        };
      },
    };
  } catch (e) {
    errors.push(`@huggingface/tokenizers: ${(e as Error).message.split('\n')[0]}`);
  }
  throw new Error(`no Hugging Face tokenizer library loads (${errors.join('; ')}). Fix: npm install in the extension or project directory`);
}

/**
 * The chat template of a tokenizer_config.json, when it has one: a string, or of named templates
 * "tool_use" when tools are given and it exists (as transformers chooses), else "default".
 */
export function chatTemplateOf(config: Record<string, unknown>, withTools = false): string | undefined {
  const t = config.chat_template;
  if (typeof t === 'string' && t.trim() !== '') return t;
  if (Array.isArray(t)) {
    const named = t as { name?: unknown; template?: unknown }[];
    const pick = (withTools ? named.find((x) => x.name === 'tool_use') : undefined) ?? named.find((x) => x.name === 'default');
    if (typeof pick?.template === 'string') return pick.template;
  }
  return undefined;
}

/** Highest id in a tokenizer.json (model vocabulary and added tokens) + 1. */
function hfVocabSize(json: Record<string, unknown>): number {
  let max = -1;
  const vocab = (json.model as { vocab?: unknown } | undefined)?.vocab;
  if (Array.isArray(vocab))
    max = vocab.length - 1; // Unigram: [[piece, score], ...], id = index
  else if (vocab && typeof vocab === 'object') for (const id of Object.values(vocab as Record<string, number>)) max = Math.max(max, id);
  for (const t of (json.added_tokens as { id: number }[] | undefined) ?? []) max = Math.max(max, t.id);
  if (max < 0) throw new Error('tokenizer.json: model.vocab is missing or empty');
  return max + 1;
}

/** A tokenizer folder that cannot be used: the message names the file, the numbers and the fix. */
export class TokenizerError extends Error {
  readonly exitCode = 2; // bad input, not a failure while running: agent-rl exits 2 (src/cli/exitCodes.ts)
  override name = 'TokenizerError';
}

/**
 * A Hugging Face tokenizer (BPE, WordPiece, Unigram, ...) from a tokenizer.json. Text is encoded
 * without special tokens (the environment's text is the whole context) and decoded verbatim (no
 * clean-up of spaces), so stop strings and parsers see exactly what the model wrote. Checkpoints carry
 * both JSON files, so a checkpoint never depends on the directory it was trained from.
 */
export class HfTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly library: string;
  private readonly impl: HfImpl;

  constructor(
    readonly tokenizerJson: Record<string, unknown>,
    readonly tokenizerConfig: Record<string, unknown> = {},
  ) {
    this.vocabSize = hfVocabSize(tokenizerJson);
    const lib = loadHfLibrary();
    this.library = lib.library;
    this.impl = lib.make(tokenizerJson, tokenizerConfig);
  }

  /** Loads `dir/tokenizer.json` and, when present, `dir/tokenizer_config.json`. */
  /**
   * A tokenizer.json (and tokenizer_config.json) in `dir`. `of`: what the folder is, for the message —
   * policyOptions.tokenizer's folder, or a model checkpoint's (whose files must be the model's own).
   */
  static fromDirectory(dir: string, of: 'tokenizer' | 'model' = 'tokenizer'): HfTokenizer {
    const file = path.join(dir, 'tokenizer.json');
    if (!fs.existsSync(file)) {
      if (of === 'model')
        throw new TokenizerError(
          `${dir}: the model folder has no tokenizer.json. Fix: copy the tokenizer files saved with the checkpoint (tokenizer.json and tokenizer_config.json, from save_pretrained or the model's download) into the folder`,
        );
      throw new TokenizerError(
        `policyOptions.tokenizer: ${fs.existsSync(dir) ? `no tokenizer.json in ${dir}` : `${dir} does not exist`}. Fix: point it at a directory holding a Hugging Face tokenizer.json, or leave it empty for the character-level tokenizer`,
      );
    }
    const read = (f: string): Record<string, unknown> => {
      try {
        const v = JSON.parse(fs.readFileSync(f, 'utf8')) as unknown;
        if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('not a JSON object');
        return v as Record<string, unknown>;
      } catch (e) {
        throw new TokenizerError(
          `${f} is not valid: ${(e as Error).message}. Fix: save the tokenizer again (tokenizer.save_pretrained), or copy it from the model's download`,
        );
      }
    };
    const configFile = path.join(dir, 'tokenizer_config.json');
    const json = read(file);
    const config = fs.existsSync(configFile) ? read(configFile) : {};
    try {
      return new HfTokenizer(json, config);
    } catch (e) {
      throw new TokenizerError(
        `${file}: the tokenizer library cannot read it (${(e as Error).message.split('\n')[0]}). Fix: save the tokenizer again with a current transformers (tokenizer.save_pretrained)`,
      );
    }
  }

  /** Refuses a tokenizer with ids the model has no embedding row for (config.json's vocab_size). */
  checkFits(dir: string, vocabSize: number): void {
    if (this.vocabSize <= vocabSize) return;
    throw new TokenizerError(
      `${path.join(dir, 'tokenizer.json')} has ids up to ${this.vocabSize - 1} (${this.vocabSize.toLocaleString('en')} in all), but config.json's vocab_size is ${vocabSize.toLocaleString('en')}: the model has no embedding for ids ${vocabSize} … ${this.vocabSize - 1}. Fix: use the tokenizer files saved with this checkpoint`,
    );
  }

  encode(text: string): number[] {
    return this.impl.encode(text);
  }

  decode(ids: readonly number[]): string {
    return ids.length === 0 ? '' : this.impl.decode([...ids]); // the libraries reject an empty list
  }

  /** The chat template of tokenizer_config.json, when it has one (a string; named templates: "default"). */
  get chatTemplate(): string | undefined {
    return chatTemplateOf(this.tokenizerConfig);
  }

  /** The texts of the added tokens marked special (control tokens such as <|im_end|>, not added words or whitespace). */
  specialTokens(): string[] {
    return ((this.tokenizerJson.added_tokens as { content?: unknown; special?: unknown }[] | undefined) ?? [])
      .filter((t) => t.special === true)
      .map((t) => (typeof t.content === 'string' ? t.content : ''))
      .filter((t) => t !== '');
  }

  specialIds(): number[] {
    return ((this.tokenizerJson.added_tokens as { id?: unknown; special?: unknown }[] | undefined) ?? [])
      .filter((t) => t.special === true && typeof t.id === 'number')
      .map((t) => t.id as number);
  }

  /** The id of a token given by its text (special or added tokens such as <|im_end|>), if the vocabulary has it. */
  tokenId(text: string): number | undefined {
    const added = (this.tokenizerJson.added_tokens as { id: number; content: string }[] | undefined)?.find((t) => t.content === text);
    if (added) return added.id;
    const ids = this.encode(text);
    return ids.length === 1 ? ids[0] : undefined;
  }

  /** Renders messages with the chat template (text, not ids: the caller encodes what it needs). */
  renderChat(messages: readonly ChatMessage[], o: ChatRenderOptions): string {
    if (!this.chatTemplate)
      throw new Error(
        'tokenizer_config.json has no chat_template. Fix: set policyOptions.chatTemplate to "none", or use the instruct model\'s tokenizer files',
      );
    if (!this.impl.render)
      throw new Error('the chat template cannot be rendered here. Fix: npm install (it needs @huggingface/jinja), or set policyOptions.chatTemplate to "none"');
    return this.impl.render(messages, o);
  }

  toJSON(): { kind: string; tokenizer: Record<string, unknown>; config: Record<string, unknown> } {
    return { kind: 'hf', tokenizer: this.tokenizerJson, config: this.tokenizerConfig };
  }
}

/** The character vocabulary's tokenizer.json as a tokenizer (one per process: loading the library costs). */
let characters: HfTokenizer | undefined;
export function characterHfTokenizer(): HfTokenizer {
  if (!characters) {
    const t = characterTokenizer();
    characters = new HfTokenizer(t.tokenizer, t.config);
  }
  return characters;
}

/**
 * A checkpoint's stored tokenizer. The small GPT of earlier versions stored its character tokenizer
 * as { kind: "char" }: the character tokenizer.json decodes the same ids (its unknown id as <unk>).
 */
export function tokenizerFromJSON(json: { kind: string; [k: string]: unknown }): Tokenizer {
  if (json.kind === 'char') return characterHfTokenizer();
  if (json.kind === 'hf' && json.tokenizer && typeof json.tokenizer === 'object') {
    return new HfTokenizer(json.tokenizer as Record<string, unknown>, (json.config ?? {}) as Record<string, unknown>);
  }
  throw new Error(`unknown tokenizer kind ${JSON.stringify(json.kind)} in checkpoint`);
}
