// Webview HTML (pure): strict CSP, one nonce'd script, our stylesheet, no inline handlers. The body is
// static markup of ours; all data arrives later as messages and is rendered with textContent.
import { escapeHtml } from '../../shared/untrustedText';

export interface PageParts {
  readonly scriptUri: string;
  readonly styleUri: string;
  readonly cspSource: string;
  readonly nonce: string;
  readonly title?: string;
  readonly body?: string;
}

const DASHBOARD_BODY =
  '<header><h1>Agent RL</h1><div id="runs" role="group" aria-label="Runs to compare"></div><p id="run-weights" hidden></p></header>\n<section id="health" aria-label="Run health"></section>\n<section id="drill" hidden></section>\n<main id="charts"></main>';

export function webviewPage(p: PageParts): string {
  const csp = [`default-src 'none'`, `img-src ${p.cspSource} data:`, `style-src ${p.cspSource}`, `script-src 'nonce-${p.nonce}'`].join('; ');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeHtml(p.styleUri)}"><title>${escapeHtml(p.title ?? 'Agent RL Dashboard')}</title></head>
<body>${p.body ?? DASHBOARD_BODY}
<script nonce="${escapeHtml(p.nonce)}" src="${escapeHtml(p.scriptUri)}"></script></body></html>`;
}
