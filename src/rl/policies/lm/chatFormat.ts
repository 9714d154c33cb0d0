// Prompting a chat model the way it was trained, token in, token out. The conversation's first ids are
// the template's rendering of the system message and the first observation (as a user message, with
// the environment's tools in the template's `tools`), ending in the generation prompt. After that the
// policy's sampled ids stand as they were sampled, and each later observation adds only the template's
// text between the end of an assistant message and the next generation prompt — never a re-encoding
// of the whole conversation. That glue comes from the template itself: a conversation around a
// placeholder assistant message is rendered with the new message after it, and what follows the
// placeholder is the glue. A template that renders earlier turns differently once a message follows
// them (Qwen3's drops an earlier turn's reasoning) cannot apply that inside an episode, where the model
// reads exactly the tokens it was given and wrote: the history stays as generated, and the run records
// that the template's rewriting of earlier turns was not applied (`rewritesHistory`).
import { openAiMessage } from '../../../shared/openAiMessage';
import type { AgentMessage, AgentRequest, Observation } from '../../../shared/types';
import type { ChatMessage, HfTokenizer } from './tokenizer';
import { ModelLoadError } from './models/hfConfig';

/** Stands for an assistant message's content while the template is rendered (never in real text). */
const PLACEHOLDER = '\u0001assistant-content\u0001';

export class ChatFormat {
  /**
   * Where generation stops: the checkpoint's end-of-sequence tokens and the template's own end of an
   * assistant message (the special token its rendering puts right after the content, e.g. <|im_end|>
   * or <|eot_id|>), which a base model's generation_config may not list. They are trained as the
   * assistant's.
   */
  readonly eosIds: readonly number[];
  readonly eosTexts: readonly string[];
  /** The template's end-of-turn token text, when its rendering closes an assistant message with one. */
  readonly endOfTurn: string | undefined;
  /** A conversation up to a placeholder assistant message, rendered once: every later turn's glue starts from it. */
  private readonly start: readonly ChatMessage[];
  private readonly startText: string;
  /**
   * The template renders an earlier assistant turn differently once a message follows it (a thinking
   * template dropping reasoning): within an episode that rewriting is not applied.
   */
  readonly rewritesHistory: boolean;

  constructor(
    private readonly tokenizer: HfTokenizer,
    eosIds: readonly number[],
    private readonly system = '',
    private readonly variables: Readonly<Record<string, unknown>> = {},
  ) {
    this.start = [...this.systemMessages(), { role: 'user', content: 'x' }, { role: 'assistant', content: PLACEHOLDER }];
    // also fails now, with the fix, if the template cannot render
    this.startText = tokenizer.renderChat(this.start, { addGenerationPrompt: false, variables });
    const at = this.startText.indexOf(PLACEHOLDER);
    if (at < 0)
      throw new ModelLoadError('the chat template does not render an assistant message\'s content as given. Fix: set policyOptions.chatTemplate to "none"');
    // whether a following message changes how the turns before it render (and that it keeps the content)
    const probe = tokenizer.renderChat([...this.start, { role: 'user', content: 'y' }], { addGenerationPrompt: true, variables });
    const atProbe = probe.indexOf(PLACEHOLDER);
    if (atProbe < 0)
      throw new ModelLoadError(
        'the chat template drops an earlier assistant message\'s content once another message follows it, so the turns of an episode cannot be appended token by token. Fix: set policyOptions.chatTemplate to "none"',
      );
    this.rewritesHistory = probe.slice(0, atProbe) !== this.startText.slice(0, at);
    // the template's text right after an assistant message's content (its end of turn, if a token)
    const closing = this.startText.slice(at + PLACEHOLDER.length);
    const special = tokenizer
      .specialTokens()
      .filter((t) => t !== '' && closing.startsWith(t))
      .sort((a, b) => b.length - a.length)[0];
    this.endOfTurn = special;
    const turnId = special !== undefined ? tokenizer.tokenId(special) : undefined;
    const ids = [...eosIds];
    if (turnId !== undefined && !ids.includes(turnId)) ids.unshift(turnId);
    this.eosIds = ids;
    this.eosTexts = ids.map((id) => tokenizer.decode([id]));
  }

  private systemMessages(): ChatMessage[] {
    return this.system ? [{ role: 'system', content: this.system }] : [];
  }

  private static message(o: Observation): ChatMessage {
    return o.chat ? { role: o.chat.role, content: o.chat.content } : { role: 'user', content: o.text };
  }

  /** The first context: the template over the system message and the first observation, with the generation prompt. */
  firstText(o: Observation): string {
    const first = ChatFormat.message(o);
    return this.tokenizer.renderChat([...this.systemMessages(), { role: 'user', content: first.content }], {
      addGenerationPrompt: true,
      variables: this.variables,
      ...(o.chat?.tools?.length ? { tools: o.chat.tools } : {}),
    });
  }

  /**
   * The text after an assistant message and before the next assistant content: the template's close of
   * the assistant message (less the end-of-turn token the model already wrote), the observation's
   * message, and the generation prompt.
   */
  nextText(o: Observation, ended: string | undefined): string {
    return this.continuationText([ChatFormat.message(o)], ended);
  }

  /** `nextText` for any messages after the assistant's (an agent program's tool results and user messages). */
  continuationText(messages: readonly ChatMessage[], ended: string | undefined, tools?: readonly Readonly<Record<string, unknown>>[]): string {
    // with the request's tools: a template with a tool-use variant renders the glue as it renders the rest
    const withNext = this.tokenizer.renderChat([...this.start, ...messages], {
      addGenerationPrompt: true,
      variables: this.variables,
      ...(tools?.length ? { tools } : {}),
    });
    const at = withNext.indexOf(PLACEHOLDER);
    if (at < 0) {
      throw new ModelLoadError(
        `the chat template drops an earlier assistant message's content once a ${messages[0]?.role ?? 'user'} message follows it, so a turn cannot be appended token by token. Fix: set policyOptions.chatTemplate to "none"`,
      );
    }
    // what the template writes after the assistant's content: its close, the message, the generation prompt
    let glue = withNext.slice(at + PLACEHOLDER.length);
    // the model closed its message with the template's own token: the glue goes on after it. Another
    // end-of-sequence token (<|endoftext|> where the template closes with <|im_end|>) stays in the
    // record, and the template's close follows it as context, so the next turn still sees the template.
    if (ended !== undefined && glue.startsWith(ended)) glue = glue.slice(ended.length);
    return glue;
  }

  /**
   * An agent program's request as a prompt (env "agent"): its whole conversation through the template
   * with its tools, ending in the generation prompt (the first request, or a new segment); or, when it
   * continues the episode's context, only its messages after the policy's last answer, as glue.
   */
  request(r: AgentRequest, lastSampled: readonly number[]): number[] {
    const messages = r.messages.map(templateMessage);
    if (r.continuesFrom > 0) {
      const last = lastSampled[lastSampled.length - 1];
      return this.tokenizer.encode(
        this.continuationText(
          messages.slice(r.continuesFrom),
          last !== undefined && this.eosIds.includes(last) ? this.tokenizer.decode([last]) : undefined,
          r.tools,
        ),
      );
    }
    return this.tokenizer.encode(
      this.tokenizer.renderChat(messages, { addGenerationPrompt: true, variables: this.variables, ...(r.tools.length ? { tools: r.tools } : {}) }),
    );
  }

  first(o: Observation): number[] {
    return this.tokenizer.encode(this.firstText(o));
  }

  next(o: Observation, lastSampled: readonly number[]): number[] {
    const last = lastSampled[lastSampled.length - 1];
    return this.tokenizer.encode(this.nextText(o, last !== undefined && this.eosIds.includes(last) ? this.tokenizer.decode([last]) : undefined));
  }

  /** The action text the environment parses: without the end-of-turn token the model closed it with. */
  actionText(text: string): string {
    for (const eos of this.eosTexts) if (eos && text.endsWith(eos)) return text.slice(0, -eos.length);
    return text;
  }
}

/** The arguments of a call as chat templates read them: an object where the JSON text parses, else the text. */
function parsedArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** An agent program's message as chat templates read it: OpenAI's format, calls with their arguments parsed. */
const templateMessage = (m: AgentMessage): ChatMessage => openAiMessage(m, parsedArguments);
