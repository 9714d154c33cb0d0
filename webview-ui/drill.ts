// The dashboard's drill-down: a click on an iteration's point in the mismatch, clip or KL chart asks the
// host for that iteration's worst tokens (by |training − sampling log-prob|, |log π/π_old| or KL) and
// its histogram of |training − sampling log-prob|; each listed token opens in the inspector in context.
// What it shows comes from src/shared/drillModel.ts; this file only renders it (text through el()).
import { Chart } from 'chart.js';
import { drillView } from '../src/shared/drillModel';
import { axisTick } from '../src/shared/format';
import type { DashboardDrill } from '../src/shared/protocol/webviewProtocol';
import { chartColour, el, onThemeChange, themeColour, worstTableElement } from './dom';

let histogramChart: Chart | undefined;

/** Draws the drill-down section; `openToken` opens a listed token in the inspector. */
export function showDrill(d: DashboardDrill, runName: string, openToken: (trajectoryId: number, turn: number, token: number) => void): void {
  const view = drillView(d, runName);
  const box = document.getElementById('drill')!;
  box.hidden = false;
  box.dataset.run = String(d.runId);
  box.dataset.iteration = String(d.iteration);
  box.dataset.by = d.by;
  box.replaceChildren();
  const close = el('button', 'drill-close secondary-button', 'close');
  close.type = 'button';
  close.addEventListener('click', () => {
    box.hidden = true;
    box.replaceChildren();
    histogramChart?.destroy();
    histogramChart = undefined;
  });
  box.append(el('h2', undefined, view.title), close);
  const grid = el('div', 'drill-grid');
  const list = el('div', 'drill-list');
  if (view.empty !== undefined) list.append(el('p', 'empty-list', view.empty));
  else list.append(worstTableElement(view.table, 'drill-token', openToken));
  const hbox = el('div', 'drill-histogram');
  hbox.append(el('div', 'meta', view.histogram.meta));
  const canvasBox = el('div', 'canvas-box');
  const canvas = el('canvas');
  canvasBox.append(canvas);
  hbox.append(canvasBox);
  grid.append(list, hbox);
  box.append(grid);
  histogramChart?.destroy();
  const fg = themeColour('--vscode-foreground', '#ccc');
  const bar = chartColour('--vscode-charts-orange', '#d18616');
  const bars = view.histogram.bars;
  histogramChart = new Chart(canvas, {
    type: 'bar',
    data: {
      datasets: [
        {
          label: view.histogram.yTitle,
          data: bars.map((b) => ({ x: b.x, y: b.y })),
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
        x: { type: 'linear', offset: false, title: { display: true, text: view.histogram.xTitle, color: fg }, ticks: { color: fg, callback: axisTick } },
        y: { beginAtZero: true, title: { display: true, text: view.histogram.yTitle, color: fg }, ticks: { color: fg, precision: 0, callback: axisTick } },
      },
      plugins: {
        legend: { display: false },
        tooltip: { enabled: true, callbacks: { title: () => '', label: (ctx) => bars[ctx.dataIndex]?.label ?? '' } },
      },
    },
  });
  box.scrollIntoView({ block: 'start' });
}

// a theme change repaints the histogram (a canvas) in the new theme's colours
onThemeChange(() => {
  const chart = histogramChart;
  if (!chart) return;
  const fg = themeColour('--vscode-foreground', '#ccc');
  for (const scale of Object.values(chart.options.scales ?? {})) {
    if (!scale) continue;
    if (scale.ticks) scale.ticks.color = fg;
    if ('title' in scale && scale.title) scale.title.color = fg;
  }
  const ds = chart.data.datasets[0];
  if (ds) ds.backgroundColor = chartColour('--vscode-charts-orange', '#d18616');
  chart.update();
});
