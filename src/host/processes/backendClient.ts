// Lazily started client of the query backend: request ids, a timeout per request, errors normalised,
// the process restarted on the next request after it dies, killed on dispose.
import type { ChildProcess } from 'node:child_process';
import { isBackendResponse, type BackendMethod, type BackendMethods } from '../../shared/protocol/backendProtocol';
import { forkNode, NodeNotFoundError, type ForkOptions } from './nodeProcess';

export class BackendError extends Error {
  constructor(
    readonly method: string,
    message: string,
  ) {
    super(`backend ${method}: ${message}`);
    this.name = 'BackendError';
  }
}

interface Pending {
  readonly method: string;
  readonly resolve: (v: unknown) => void;
  readonly reject: (e: Error) => void;
  readonly timer: NodeJS.Timeout;
}

export class BackendClient {
  private child: ChildProcess | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private disposed = false;

  constructor(
    private readonly fork: Omit<ForkOptions, 'args'>,
    private readonly db: string,
    private readonly timeoutMs = 10_000,
  ) {}

  private ensure(): ChildProcess {
    if (this.disposed) throw new Error('BackendClient: used after dispose()');
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) return this.child;
    const child = forkNode({ ...this.fork, args: [this.db] });
    child.on('message', (msg: unknown) => {
      if (!isBackendResponse(msg)) return;
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      clearTimeout(p.timer);
      if (msg.ok) p.resolve(msg.result);
      else p.reject(new BackendError(p.method, msg.error));
    });
    const failAll = (why: string): void => {
      for (const [id, p] of this.pending) {
        clearTimeout(p.timer);
        p.reject(new BackendError(p.method, why));
        this.pending.delete(id);
      }
      if (this.child === child) this.child = undefined;
    };
    child.on('error', (e) =>
      failAll((e as NodeJS.ErrnoException).code === 'ENOENT' ? new NodeNotFoundError(this.fork.runtime.execPath, 'not found').message : e.message),
    );
    child.on('exit', (code, signal) => failAll(`the backend process exited (code ${code}, signal ${signal})`));
    this.child = child;
    return child;
  }

  /** `timeoutMs`: this request's own limit (a re-score runs minutes); default the client's. */
  request<M extends BackendMethod>(method: M, params: BackendMethods[M]['params'], timeoutMs = this.timeoutMs): Promise<BackendMethods[M]['result']> {
    return new Promise((resolve, reject) => {
      let child: ChildProcess;
      try {
        child = this.ensure();
      } catch (e) {
        reject(e instanceof Error ? e : new Error(String(e)));
        return;
      }
      const id = this.nextId++;
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new BackendError(method, `no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { method, resolve: resolve as (v: unknown) => void, reject, timer });
      child.send({ id, method, params }, (err) => {
        if (err) {
          clearTimeout(timer);
          this.pending.delete(id);
          reject(new BackendError(method, err.message));
        }
      });
    });
  }

  /** The backend's pid, if it is running (tests and diagnostics). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  dispose(): void {
    this.disposed = true;
    this.child?.kill();
    this.child = undefined;
  }
}
