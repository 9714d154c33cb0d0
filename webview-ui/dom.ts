// The one way the inspector's pages put text on screen: textContent (never HTML), with invisible and
// direction-changing characters shown as markers (src/shared/untrustedText.ts).
import { showInvisibles } from '../src/shared/untrustedText';

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = showInvisibles(text);
  return e;
}

/** Marks `target` as the one highlighted element and scrolls it into view. */
export function highlight(target: HTMLElement): void {
  for (const old of document.querySelectorAll('.hl')) old.classList.remove('hl');
  target.classList.add('hl');
  target.scrollIntoView({ block: 'center' });
}
