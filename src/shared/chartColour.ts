// A theme colour as a chart line or bar draws it (pure; webview-ui/dom.ts reads the variable).

/**
 * The colour without its transparency. Light Modern's and Dark Modern's --vscode-charts-orange is the
 * find-match highlight, rgba(234, 92, 0, 0.33): too faint for a line or a bar on either background.
 * Other colours (a name, rgb(), #rgb, #rrggbb) come back as they are.
 */
export function opaqueColour(colour: string): string {
  const c = colour.trim();
  const rgba = /^rgba?\(\s*([\d.]+%?)\s*[, ]\s*([\d.]+%?)\s*[, ]\s*([\d.]+%?)\s*[,/]\s*[\d.]+%?\s*\)$/i.exec(c);
  if (rgba) return `rgb(${rgba[1]}, ${rgba[2]}, ${rgba[3]})`;
  const hex = /^#([0-9a-f]{6})[0-9a-f]{2}$/i.exec(c) ?? /^#([0-9a-f]{3})[0-9a-f]$/i.exec(c);
  return hex ? `#${hex[1]}` : c;
}
