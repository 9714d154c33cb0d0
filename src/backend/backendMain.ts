// The query backend: one long-lived process forked by the VS Code host on the runtime it resolved (runtime.ts). It opens the
// database (read/write for the few maintenance calls) and answers typed requests (BackendMethods) by id.
// A bad request gets an error response; the process never dies on one.
import '../store/nodeFloorGuard'; // first: refuses a Node older than the floor before better-sqlite3 loads
import { isBackendRequest, type BackendResponse } from '../shared/protocol/backendProtocol';
import { openStore } from '../store/openStore';
import { SandboxPools } from '../rl/sandbox/sandboxPools';
import { handlers, type Handlers } from './handlers';

function main(): void {
  const dbPath = process.argv[2];
  if (!process.send || !dbPath) {
    process.stderr.write('agent-rl backend: fork me with the database path as the first argument\n');
    process.exit(2);
  }
  let h: Handlers | undefined;
  let openError: string | undefined;
  // the warm interpreters of Re-run in Sandbox: the backend's own, closed when it goes
  const pools = new SandboxPools();
  try {
    h = handlers(openStore(dbPath), pools);
  } catch (e) {
    openError = e instanceof Error ? e.message : String(e);
  }
  process.on('message', (msg: unknown) => {
    const id = typeof msg === 'object' && msg !== null && typeof (msg as { id?: unknown }).id === 'number' ? (msg as { id: number }).id : -1;
    let reply: BackendResponse;
    if (!isBackendRequest(msg)) {
      reply = { id, ok: false, error: `malformed request: ${JSON.stringify(msg).slice(0, 200)}` };
    } else if (!h) {
      reply = { id, ok: false, error: openError ?? 'database not open' };
    } else {
      const fn = h[msg.method] as (p: unknown) => unknown;
      // Handlers may be async (a sandbox re-run); answers go out when each is ready.
      void Promise.resolve()
        .then(() => fn(msg.params))
        .then(
          (result) => process.send?.({ id, ok: true, result } satisfies BackendResponse),
          (e: unknown) => process.send?.({ id, ok: false, error: e instanceof Error ? e.message : String(e) } satisfies BackendResponse),
        );
      return;
    }
    process.send?.(reply);
  });
  process.on('disconnect', () => {
    void pools.close().finally(() => process.exit(0));
  });
}

main();
