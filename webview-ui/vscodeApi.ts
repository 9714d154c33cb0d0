// The page side of the host ⇄ webview protocol (src/shared/protocol/webviewProtocol.ts): what a page
// may post is typed by its *ToHost union, what it keeps as state by its state type, and every message
// from the host is checked by its guard before use.
import type { Guard } from '../src/shared/protocol/guards';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

export interface WebviewApi<ToHost, State> {
  post(message: ToHost): void;
  /** The state saved by setState before the page was hidden or VS Code restarted (unchecked). */
  state(): unknown;
  setState(state: State): void;
}

/** acquireVsCodeApi, typed (it may be called once per page: call this once). */
export function vscodeApi<ToHost, State = never>(): WebviewApi<ToHost, State> {
  const api = acquireVsCodeApi();
  return { post: (m) => api.postMessage(m), state: () => api.getState(), setState: (s) => api.setState(s) };
}

/** Calls `handle` with each message from the host that passes `guard`; others are ignored. */
export function onHostMessage<T>(guard: Guard<T>, handle: (message: T) => void): void {
  window.addEventListener('message', (event: MessageEvent<unknown>) => {
    if (guard(event.data)) handle(event.data);
  });
}
