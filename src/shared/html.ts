// Escaping for untrusted text (model output, observations, task text) placed in HTML. Every webview
// renders such text only through these helpers or through textContent.
const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ENTITIES[c]!);
}

/** Escaped text cut to `max` characters (very long lines would freeze a view), with a marker. */
export function escapeClipped(text: string, max = 20_000): string {
  return text.length > max ? `${escapeHtml(text.slice(0, max))}… [${text.length - max} more characters]` : escapeHtml(text);
}
