// Whether the compute backend is still computing real numbers. tfjs-backend-wasm does not throw when
// an allocation fails: it prints, and its kernels carry on with zeros. Every place that reads a result
// the run uses (sampled logits, gradients, log-probs, model check's logits) asks here first.
/** The first allocation failure tfjs-backend-wasm reported (XNNPACK's "out of memory" status), if any. */
let wasmFailure: string | undefined;

/**
 * tfjs-backend-wasm prints an allocation failure and carries on with zeros: XNNPACK's
 * xnn_create_* "Got status 6" (out of memory) reaches its printErr, which is console.warn bound when the
 * module starts. Hearing it is how the failure becomes an error (`assertBackendHealthy`).
 */
export function listenForWasmFailures(): void {
  const warn = console.warn; // eslint-disable-line no-console
  const hear = (...args: unknown[]): void => {
    const text = args.map(String).join(' ');
    if (/xnn_\w+.*(status|failed)|out of memory|memory access out of bounds|Cannot enlarge memory/i.test(text)) wasmFailure ??= text.slice(0, 300);
    warn.apply(console, args);
  };
  console.warn = hear; // eslint-disable-line no-console
}

/** The backend that failed to allocate: what it said, the plan's way out, and that nothing it computed since is used. */
export class BackendAllocationError extends Error {
  readonly exitCode = 2; // bad input, not a failure while running: agent-rl exits 2 (src/cli/exitCodes.ts)
  override name = 'BackendAllocationError';
}

/** Throws when the wasm backend reported a failed allocation: every number it computed after that is wrong. */
export function assertBackendHealthy(what: string): void {
  if (wasmFailure === undefined) return;
  throw new BackendAllocationError(
    `tfjs-backend-wasm failed to allocate memory ("${wasmFailure}"), so ${what} would be computed from zeros; nothing it computed is used. Fix: a smaller policyOptions.microBatchPositions or contextLength, a smaller checkpoint, or the tfjs-node backend (npm install @tensorflow/tfjs-node)`,
  );
}
