// The dashboard's drill-down: a click on an iteration's point in the mismatch, clip or KL chart asks the
// host for that iteration's worst tokens (by |training − sampling log-prob|, |log π/π_old| or KL) and
// its histogram of |training − sampling log-prob|; each listed token opens in the inspector in context.
// Token data is untrusted: text through textContent only.
import { Chart } from 'chart.js';
import type { DashboardDrill } from '../src/shared/protocol/webviewProtocol';
import { tokenNumber, type WorstBy } from '../src/shared/tokenStatsRows';
import { el } from './dom';

const BY_TEXT: Record<WorstBy, string> = {
  mismatch: '|training − sampling log-prob|',
  logRatio: '|log π/π_old| (what the clip acts on)',
  kl: 'KL to the reference',
};

let histogramChart: Chart | undefined;

/** Draws the drill-down section; `openToken` opens a listed token in the inspector. */
export function showDrill(d: DashboardDrill, runName: string, openToken: (trajectoryId: number, turn: number, token: number) => void): void {
  const box = document.getElementById('drill')!;
  box.hidden = false;
  box.dataset.run = String(d.runId);
  box.dataset.iteration = String(d.iteration);
  box.dataset.by = d.by;
  box.replaceChildren();
  const close = el('button', 'drill-close', 'close');
  close.type = 'button';
  close.addEventListener('click', () => {
    box.hidden = true;
    box.replaceChildren();
    histogramChart?.destroy();
    histogramChart = undefined;
  });
  box.append(el('h2', undefined, `${runName} · iteration ${d.iteration}: worst tokens by ${BY_TEXT[d.by]}`), close);
  const grid = el('div', 'drill-grid');
  const list = el('ol', 'drill-list');
  if (d.error !== undefined) list.append(el('li', 'empty-list', `could not be read: ${d.error}`));
  else if (d.items.length === 0)
    list.append(el('li', 'empty-list', 'no token of this iteration has this number recorded (not trained on, or a run stored before token statistics)'));
  for (const w of d.items) {
    const li = el('li');
    const a = el(
      'a',
      'drill-token',
      `${tokenNumber(w.value)} · trajectory ${w.trajectoryId} turn ${w.turn} token ${w.token} (id ${w.id}) · sampled ${tokenNumber(w.behaviour, 3)} · ratio ${tokenNumber(w.ratio, 3)} · clip ${w.clip ?? '—'} · advantage ${tokenNumber(w.advantage, 3)}`,
    );
    a.href = '#';
    a.dataset.trajectory = String(w.trajectoryId);
    a.addEventListener('click', (ev) => {
      ev.preventDefault();
      openToken(w.trajectoryId, w.turn, w.token);
    });
    li.append(a);
    list.append(li);
  }
  const h = d.histogram;
  const hbox = el('div', 'drill-histogram');
  hbox.append(
    el(
      'div',
      'meta',
      `|training − sampling log-prob| of ${h.tokens} tokens${h.unknown > 0 ? ` (${h.unknown} more trained after another step of the update: unknown; algorithm.oldLogprobs "recompute" records every token)` : ''}`,
    ),
  );
  const canvasBox = el('div', 'canvas-box');
  const canvas = el('canvas');
  canvasBox.append(canvas);
  hbox.append(canvasBox);
  grid.append(list, hbox);
  box.append(grid);
  histogramChart?.destroy();
  const fg = getComputedStyle(document.body).getPropertyValue('--vscode-foreground').trim() || '#ccc';
  const bar = getComputedStyle(document.body).getPropertyValue('--vscode-charts-orange').trim() || '#d18616';
  const width = (h.edges[1] ?? 1) - (h.edges[0] ?? 0);
  histogramChart = new Chart(canvas, {
    type: 'bar',
    data: {
      datasets: [
        {
          label: 'tokens',
          data: h.counts.map((y, i) => ({ x: (h.edges[i] ?? 0) + width / 2, y })),
          backgroundColor: bar,
          barPercentage: 1,
          categoryPercentage: 1,
        },
      ],
    },
    options: {
      animation: false,
      parsing: false,
      maintainAspectRatio: false,
      scales: {
        x: { type: 'linear', offset: false, title: { display: true, text: '|log π_train − log π_sampler| (nats)', color: fg }, ticks: { color: fg } },
        y: { beginAtZero: true, title: { display: true, text: 'tokens', color: fg }, ticks: { color: fg, precision: 0 } },
      },
      plugins: { legend: { display: false }, tooltip: { enabled: true } },
    },
  });
  box.scrollIntoView({ block: 'start' });
}
