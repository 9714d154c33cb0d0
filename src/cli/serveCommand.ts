// `agent-rl serve --model DIR`: a local checkpoint on an OpenAI-compatible chat-completions endpoint on
// 127.0.0.1, greedy, through the workbench's own tokenizer, chat template and agent endpoint
// (rl/train/judge/servedModel.ts) — the offline judge of docs/judge.md. It runs until SIGINT or SIGTERM.
// The key: read from the variable --key-env names (so a judge's apiKeyEnv and the server share it and
// it is never printed), else a fresh one printed once on stdout for the client to use.
import { ACTION_GRAMMARS, type ActionGrammarName } from '../rl/envs/actionGrammar';
import { serveModel } from '../rl/train/judge/servedModel';
import { showInvisibles } from '../shared/untrustedText';
import { defineCommand } from './command';
import { UsageError } from './usageError';

const SERVE_USAGE = `agent-rl serve --model DIR [--port N] [--max-tokens N] [--context N] [--rollout-engine engine|llama.cpp]
               [--grammar NAME] [--key-env VAR]
  a local checkpoint served as an OpenAI-compatible chat-completions endpoint on 127.0.0.1 (a judge's baseUrl),
  greedy (temperature 0 whatever a request asks), its chat template applied by the workbench's tokenizer;
  runs until Ctrl-C. Prints "serving MODEL at URL" (the base URL up to /v1)
  --model           a Hugging Face checkpoint folder with a chat template (tokenizer_config.json)
  --port            the port (default 0: a free one, printed)
  --max-tokens      the most tokens an answer has; a request's max_tokens may ask for fewer (default 256)
  --context         the model's context in tokens, prompt and answer (default: its max_position_embeddings up to 2048)
  --rollout-engine  what samples: the workbench's engine (default) or llama.cpp (a GGUF written beside the model cache)
  --grammar         constrain every answer to a named grammar: ${Object.keys(ACTION_GRAMMARS).join(', ')}
                    (judge-scores-N: a judge's {"scores": {"t0": s, …}} for a group of N)
  --key-env         the bearer key clients must send, from this environment variable (never printed);
                    default a fresh key, printed`;

export const serveCommand = defineCommand({
  name: 'serve',
  summary: 'a local checkpoint served as an OpenAI-compatible chat-completions endpoint on loopback (a local judge)',
  usage: SERVE_USAGE,
  options: {
    model: { type: 'string' },
    port: { type: 'string' },
    'max-tokens': { type: 'string' },
    context: { type: 'string' },
    'rollout-engine': { type: 'string' },
    grammar: { type: 'string' },
    'key-env': { type: 'string' },
  },
  sets: [],
  positionals: { min: 0, max: 0, error: 'serve takes no positionals; name the checkpoint with --model DIR' },
  run: async ({ values: v }) => {
    if (v.model === undefined) throw new UsageError(`serve needs --model DIR\n\n${SERVE_USAGE}`);
    const whole = (flag: string, text: string | undefined, fallback: number, min: number, max: number): number => {
      if (text === undefined) return fallback;
      const n = Number(text);
      if (!/^\d+$/.test(text) || n < min || n > max) throw new UsageError(`--${flag} ${showInvisibles(text)}: give a whole number from ${min} to ${max}`);
      return n;
    };
    const engine = v['rollout-engine'] ?? 'engine';
    if (engine !== 'engine' && engine !== 'llama.cpp') throw new UsageError(`--rollout-engine ${showInvisibles(engine)}: use engine or llama.cpp`);
    const grammar = v.grammar;
    if (grammar !== undefined && !Object.hasOwn(ACTION_GRAMMARS, grammar))
      throw new UsageError(`--grammar ${showInvisibles(grammar)}: use one of ${Object.keys(ACTION_GRAMMARS).join(', ')}`);
    let key: string | undefined;
    const keyEnv = v['key-env'];
    if (keyEnv !== undefined) {
      key = process.env[keyEnv];
      if (key === undefined || key === '' || /\s/.test(key))
        throw new UsageError(
          `--key-env ${showInvisibles(keyEnv)}: the variable is unset, empty or holds spaces. Fix: export ${showInvisibles(keyEnv)}=<key> first`,
        );
    }
    const served = await serveModel({
      model: v.model,
      port: whole('port', v.port, 0, 0, 65535),
      maxTokens: whole('max-tokens', v['max-tokens'], 256, 1, 8192),
      contextLength: whole('context', v.context, 0, 16, 32768),
      rolloutEngine: engine,
      ...(grammar !== undefined ? { grammar: grammar as ActionGrammarName } : {}),
      ...(key !== undefined ? { key } : {}),
    });
    const keyLine = key !== undefined ? `key: from $${keyEnv}` : `key: ${served.key}`;
    process.stdout.write(
      `serving ${showInvisibles(served.modelName)} at ${served.baseUrl}  (${showInvisibles(served.compute)}; greedy${grammar !== undefined ? `, grammar ${grammar}` : ''})\n${keyLine}\n`,
    );
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await served.stop();
    process.stdout.write('stopped\n');
    return 0;
  },
});
