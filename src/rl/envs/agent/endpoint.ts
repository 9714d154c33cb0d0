// An OpenAI-compatible chat-completions endpoint on loopback, the wire between an agent program the user
// already has (a loop around an OpenAI client) and the policy being trained. The workbench starts the
// program once per episode with OPENAI_BASE_URL set to that episode's base URL and OPENAI_API_KEY to the
// run's key; each request is checked, parsed into a ChatRequest and answered by the caller's handler,
// which samples the policy. This file is only the HTTP server: routes, the key, reading the body and
// sending; the request's types are chatRequest.ts, their validation parseChatRequest.ts (checkSchema.ts
// for a tool's parameters), the answers' shapes chatResponse.ts — their types are re-exported here, so
// a caller imports this one file. It holds no model code. A streamed answer is sent once the handler has the whole result, so the handler's errors (a prompt over
// the context, say) keep their HTTP status.
import * as crypto from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { clip, DEFAULT_LIMITS, EndpointError, invalid, type ChatRequest, type EndpointLimits, type Json } from './chatRequest';
import { completionBody, completionChunks, errorBody, type ChatResult, type Reply } from './chatResponse';
import { parseChatRequest } from './parseChatRequest';

export { EndpointError, parseChatRequest };
export type { ChatRequest, ChatRequestMessage, ChatToolCall, ChatToolDef, EndpointLimits } from './chatRequest';
export type { ChatChoice, ChatResult, ChatTokenLogprob } from './chatResponse';

export interface EndpointOptions {
  /** What /models lists and responses name. */
  readonly modelName: string;
  /**
   * Answers one request of an open episode. May throw an EndpointError (e.g. 400
   * context_length_exceeded), which the client gets as is; any other error is a 500 server_error
   * carrying the error's message (never its stack). The signal aborts when the client disconnects, the
   * episode closes or the endpoint stops.
   */
  readonly complete: (episode: string, request: ChatRequest, signal: AbortSignal) => Promise<ChatResult>;
  /** The bearer key clients must send; default a fresh random one ("sk-agentrl-" and 32 random bytes). */
  readonly key?: string;
  readonly limits?: EndpointLimits;
  /** The port to listen on; default 0, a free one (a run's endpoint; `agent-rl serve --port` names one). */
  readonly port?: number;
}

const HOST = '127.0.0.1';
const OWNER = 'agent-rl-workbench';

function send(res: http.ServerResponse, status: number, body: Json, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

/** The body, up to `max` bytes: a longer one (by its Content-Length, or as it arrives) is a 413 and the rest is not read. */
function readBody(req: http.IncomingMessage, max: number, signal: AbortSignal): Promise<Buffer> {
  const tooLarge = (): EndpointError =>
    new EndpointError(413, `The request body is over ${max} bytes, the limit of this endpoint.`, 'invalid_request_error', null, 'request_too_large');
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max) return Promise.reject(tooLarge());
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (e?: Error): void => {
      req.off('data', onData).off('end', onEnd).off('error', done);
      signal.removeEventListener('abort', onAbort);
      if (e !== undefined) reject(e);
      else resolve(Buffer.concat(chunks));
    };
    const onData = (c: Buffer): void => {
      size += c.length;
      if (size > max) {
        req.pause();
        done(tooLarge());
      } else chunks.push(c);
    };
    const onEnd = (): void => done();
    const onAbort = (): void => done(signal.reason as Error);
    req.on('data', onData).on('end', onEnd).on('error', done);
    signal.addEventListener('abort', onAbort);
  });
}

function bearer(req: http.IncomingMessage): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return m?.[1];
}

const digest = (s: string): Buffer => crypto.createHash('sha256').update(s, 'utf8').digest();

export class AgentEndpoint {
  readonly key: string;
  private readonly server: http.Server;
  private readonly limits: Required<EndpointLimits>;
  /** Open episodes and the aborts of their requests in flight. */
  private readonly episodes = new Map<string, Set<AbortController>>();
  private readonly keyDigest: Buffer;
  private readonly started = Math.floor(Date.now() / 1000);
  private boundPort = 0;
  private stopped?: Promise<void>;

  private constructor(private readonly o: EndpointOptions) {
    this.key = o.key ?? `sk-agentrl-${crypto.randomBytes(32).toString('base64url')}`;
    if (this.key.length === 0 || /\s/.test(this.key)) throw new Error('AgentEndpoint: the key must be non-empty text without spaces');
    this.keyDigest = digest(this.key);
    this.limits = { ...DEFAULT_LIMITS, ...o.limits };
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((e: unknown) => this.fail(res, e));
    });
  }

  /** Listens on 127.0.0.1 (only), on `o.port` or a free port. */
  static async start(o: EndpointOptions): Promise<AgentEndpoint> {
    const endpoint = new AgentEndpoint(o);
    await new Promise<void>((resolve, reject) => {
      endpoint.server.once('error', reject);
      endpoint.server.listen(o.port ?? 0, HOST, () => {
        endpoint.server.off('error', reject);
        resolve();
      });
    });
    endpoint.boundPort = (endpoint.server.address() as AddressInfo).port;
    return endpoint;
  }

  get port(): number {
    return this.boundPort;
  }

  /** The OPENAI_BASE_URL of one episode's program. */
  baseUrl(episode: string): string {
    return `http://${HOST}:${this.port}/episodes/${encodeURIComponent(episode)}/v1`;
  }

  /** Lets the episode's requests in (opening an open episode changes nothing). */
  open(episode: string): void {
    if (!this.episodes.has(episode)) this.episodes.set(episode, new Set());
  }

  /** Refuses the episode's further requests (404 episode_not_open) and aborts those in flight. */
  close(episode: string): void {
    const inFlight = this.episodes.get(episode);
    if (inFlight === undefined) return;
    this.episodes.delete(episode);
    const reason = new EndpointError(404, `Episode '${episode}' was closed while this request ran.`, 'invalid_request_error', null, 'episode_not_open');
    for (const c of inFlight) c.abort(reason);
  }

  /** Aborts every request in flight, closes the server and every connection. */
  stop(): Promise<void> {
    this.stopped ??= new Promise<void>((resolve) => {
      const reason = new EndpointError(503, 'The endpoint stopped.', 'server_error', null, 'endpoint_stopped');
      for (const inFlight of this.episodes.values()) for (const c of inFlight) c.abort(reason);
      this.episodes.clear();
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    return this.stopped;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const sent = bearer(req);
    // Both digests are 32 bytes, so the comparison takes the same time whatever was sent.
    if (!crypto.timingSafeEqual(digest(sent ?? ''), this.keyDigest) || sent === undefined) {
      const message =
        sent === undefined
          ? "You didn't provide an API key. Send it in the Authorization header (Authorization: Bearer <key>): the key is in OPENAI_API_KEY."
          : 'Incorrect API key provided. Use the key in OPENAI_API_KEY.';
      // Connection: close: an unauthenticated body is never read.
      return send(res, 401, errorBody(new EndpointError(401, message, 'invalid_request_error', null, 'invalid_api_key')), {
        'www-authenticate': 'Bearer',
        connection: 'close',
      });
    }
    const method = req.method ?? 'GET';
    const path = new URL(req.url ?? '/', `http://${HOST}`).pathname;
    const m = /^\/episodes\/([^/]+)\/v1(\/.*)?$/.exec(path);
    const route = m === null ? undefined : this.routeOf(m[2] ?? '');
    let episode: string | undefined;
    try {
      episode = m === null ? undefined : decodeURIComponent(m[1]!);
    } catch {
      episode = undefined;
    }
    if (route === undefined || episode === undefined) {
      throw new EndpointError(
        404,
        `Unknown request URL: ${method} ${clip(path, 200)}. This endpoint serves GET /models, GET /models/<id> and POST /chat/completions under each episode's base URL (OPENAI_BASE_URL).`,
        'invalid_request_error',
        null,
        'unknown_url',
      );
    }
    if (method !== route.method) {
      return send(
        res,
        405,
        errorBody(
          new EndpointError(
            405,
            `Method ${method} is not allowed on ${clip(path, 200)}; use ${route.method}.`,
            'invalid_request_error',
            null,
            'method_not_allowed',
          ),
        ),
        { allow: route.method },
      );
    }
    const inFlight = this.episodes.get(episode);
    if (inFlight === undefined) {
      throw new EndpointError(
        404,
        `Episode '${clip(episode)}' is not open: its program runs only while the episode does.`,
        'invalid_request_error',
        null,
        'episode_not_open',
      );
    }
    const model = { id: this.o.modelName, object: 'model', created: this.started, owned_by: OWNER };
    if (route.kind === 'models') return send(res, 200, { object: 'list', data: [model] });
    if (route.kind === 'model') {
      if (route.id !== this.o.modelName) {
        throw new EndpointError(
          404,
          `The model '${clip(route.id)}' does not exist; this endpoint serves '${this.o.modelName}'.`,
          'invalid_request_error',
          'model',
          'model_not_found',
        );
      }
      return send(res, 200, model);
    }
    const controller = new AbortController();
    inFlight.add(controller);
    res.on('close', () => {
      if (!res.writableFinished) controller.abort(new Error('the client disconnected'));
    });
    try {
      await this.chat(episode, req, res, controller.signal);
    } catch (e) {
      this.fail(res, e, controller.signal);
    } finally {
      inFlight.delete(controller);
    }
  }

  private routeOf(rest: string): { kind: 'models' | 'chat'; method: string } | { kind: 'model'; method: string; id: string } | undefined {
    if (rest === '/models') return { kind: 'models', method: 'GET' };
    if (rest === '/chat/completions') return { kind: 'chat', method: 'POST' };
    if (rest.startsWith('/models/') && rest.length > '/models/'.length) {
      try {
        return { kind: 'model', method: 'GET', id: decodeURIComponent(rest.slice('/models/'.length)) };
      } catch {
        return undefined;
      }
    }
    return undefined;
  }

  private async chat(episode: string, req: http.IncomingMessage, res: http.ServerResponse, signal: AbortSignal): Promise<void> {
    const raw = await readBody(req, this.limits.maxBodyBytes, signal);
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch (e) {
      throw invalid(null, `We could not parse the JSON body of your request (${(e as Error).message}). The endpoint expects a JSON object.`, 'invalid_json');
    }
    const request = parseChatRequest(body, this.limits);
    signal.throwIfAborted();
    const result = await this.o.complete(episode, request, signal);
    signal.throwIfAborted();
    if (result.choices.length !== request.n) throw new Error(`the handler returned ${result.choices.length} choices for n = ${request.n}`);
    const reply: Reply = { id: `chatcmpl-${crypto.randomBytes(12).toString('hex')}`, created: Math.floor(Date.now() / 1000), model: this.o.modelName };
    if (!request.stream) return send(res, 200, completionBody(reply, request, result));
    const events = completionChunks(reply, request, result).map((c) => `data: ${JSON.stringify(c)}\n\n`);
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    for (const e of events) res.write(e);
    res.end('data: [DONE]\n\n');
  }

  /**
   * Answers an error in OpenAI's shape: an EndpointError as is (or the abort's reason when the episode
   * closed or the endpoint stopped), anything else as a 500 with the message only. Once a stream's
   * headers are out, the error goes as one last event.
   */
  private fail(res: http.ServerResponse, e: unknown, signal?: AbortSignal): void {
    let err: EndpointError;
    if (signal?.aborted && signal.reason instanceof EndpointError) err = signal.reason;
    else if (e instanceof EndpointError) err = e;
    else {
      const text = e instanceof Error ? e.message : String(e);
      err = new EndpointError(500, `The model's handler failed: ${clip(text, 2000)}`, 'server_error', null, null);
    }
    if (res.destroyed || res.writableEnded) return;
    if (res.headersSent) {
      res.end(`data: ${JSON.stringify(errorBody(err))}\n\n`);
      return;
    }
    const headers: Record<string, string> = {};
    // The SDKs retry 5xx by default: a retry would sample again, a second turn the episode did not take.
    if (err.status >= 500) headers['x-should-retry'] = 'false';
    if (err.status === 413) headers.connection = 'close';
    send(res, err.status, errorBody(err), headers);
  }
}
