// Dashboard page (runs inside the webview). Draws one chart per metric with every selected run as a
// line (src/shared/dashboardModel.ts decides what), and a stacked chart of where each iteration's time
// went; large runs are decimated (LTTB) so drawing stays fast; colours come from the VS Code theme.
// Legends are ours (HTML): long run names are shortened, the whole name is the entry's hover text, and
// a click hides or shows the line. A panel with nothing to draw says why. All text from the host (run
// names, statuses) is set with textContent, never as HTML.
import {
  BarController,
  BarElement,
  Chart,
  Decimation,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  ScatterController,
  Tooltip,
  type ChartDataset,
} from 'chart.js';
import {
  chartSummary,
  emptyReason,
  panelsFor,
  PHASE_PANEL,
  phaseBars,
  phaseEmptyReason,
  PHASES,
  panelLines,
  pointLabel,
  pointTitle,
  showLegend,
  type Panel,
} from '../src/shared/dashboardModel';
import { baseWeightsNote } from '../src/shared/baseWeights';
import { healthEmpty, healthRows } from '../src/shared/health/healthView';
import { isHostToDashboard, type DashboardState, type DashboardToHost, type RunSeries } from '../src/shared/protocol/webviewProtocol';
import { axisTick } from '../src/shared/format';
import type { WorstBy } from '../src/shared/tokenStatsRows';
import { oneLine, showInvisibles } from '../src/shared/untrustedText';
import { startComparison } from './comparison';
import { chartColour, el, onThemeChange, themeColour } from './dom';
import { showDrill } from './drill';
import { onHostMessage, vscodeApi } from './vscodeApi';

Chart.register(LineController, ScatterController, BarController, LineElement, PointElement, BarElement, LinearScale, Tooltip, Decimation);

const vscode = vscodeApi<DashboardToHost, DashboardState>();
const css = themeColour;
const PALETTE = [
  '--vscode-charts-blue',
  '--vscode-charts-red',
  '--vscode-charts-green',
  '--vscode-charts-yellow',
  '--vscode-charts-purple',
  '--vscode-charts-orange',
];
const color = (i: number): string => chartColour(PALETTE[i % PALETTE.length]!, '#3794ff');

interface View {
  readonly chart: Chart;
  readonly box: HTMLElement;
  readonly legend: HTMLElement;
  readonly empty: HTMLElement;
  readonly warnings: HTMLElement;
  readonly canvas: HTMLCanvasElement;
  readonly title: string;
  readonly unit: string;
}
const views = new Map<string, View>();

/** The runs drawn last, by dataset index of each panel (a click on a point names its run). */
let drawn: readonly RunSeries[] = [];

function makeView(id: string, title: string, unit: string, kind: 'line' | 'scatter' | 'bar', rate: boolean, drill?: WorstBy): View {
  const fg = css('--vscode-foreground', '#ccc');
  const grid = css('--vscode-editorWidget-border', '#444');
  const box = el('section', 'chart');
  box.dataset.metric = id;
  const canvasBox = el('div', 'canvas-box');
  const canvas = el('canvas');
  // the chart in words for a screen reader (chartSummary), kept in step with what it draws
  canvas.setAttribute('role', 'img');
  const empty = el('p', 'empty');
  canvasBox.append(canvas, empty);
  const legend = el('ul', 'legend');
  legend.setAttribute('aria-label', `${title}: lines (a click hides or shows one)`);
  const warnings = el('div', 'warnings');
  box.append(el('h2', undefined, title), warnings, canvasBox, legend);
  if (drill) {
    box.dataset.drill = drill;
    box.append(el('p', 'drill-hint', "click an iteration's point: its worst tokens and its mismatch histogram"));
  }
  document.getElementById('charts')!.append(box);
  const stacked = kind === 'bar';
  const chart = new Chart(canvas, {
    type: kind,
    data: { datasets: [] },
    options: {
      animation: false,
      parsing: false,
      normalized: true,
      maintainAspectRatio: false,
      // a hover shows every line's number at that iteration
      interaction: { mode: 'x', intersect: false },
      scales: {
        x: {
          type: 'linear',
          stacked,
          offset: stacked,
          title: { display: true, text: 'iteration', color: fg },
          ticks: { color: fg, precision: 0, callback: axisTick },
          grid: { color: grid },
        },
        y: {
          stacked,
          title: { display: true, text: unit, color: fg },
          ticks: { color: fg, callback: axisTick },
          grid: { color: grid },
          ...(rate ? { suggestedMin: 0, suggestedMax: 1 } : { beginAtZero: stacked }),
        },
      },
      plugins: {
        legend: { display: false },
        decimation: { enabled: !stacked, algorithm: 'lttb', samples: 400 },
        tooltip: {
          enabled: true,
          callbacks: {
            title: (items) => (items[0] ? pointTitle(items[0].parsed.x ?? 0) : ''),
            label: (ctx) => pointLabel(ctx.dataset.label ?? '', ctx.parsed.y ?? 0),
          },
        },
      },
      ...(drill
        ? {
            onClick: (e) => {
              // the point nearest the click (the hover shows every line's at that iteration)
              const hit = e.native ? chart.getElementsAtEventForMode(e.native, 'nearest', { intersect: false }, true)[0] : undefined;
              const ds = hit ? (chart.data.datasets[hit.datasetIndex] as { runId?: number } | undefined) : undefined;
              const point = hit ? (chart.data.datasets[hit.datasetIndex]?.data[hit.index] as { x: number } | undefined) : undefined;
              if (ds?.runId !== undefined && point) vscode.post({ type: 'drill', runId: ds.runId, iteration: point.x, by: drill });
            },
          }
        : {}),
    },
  });
  const view = { chart, box, legend, empty, warnings, canvas, title, unit };
  views.set(id, view);
  return view;
}

/** Our legend: short names, the whole name on hover, a click toggles the line. */
function renderLegend(view: View, entries: readonly { label: string; fullLabel: string; color: string; dashed: boolean; filled?: boolean }[]): void {
  view.legend.replaceChildren();
  entries.forEach((e, i) => {
    const item = el('li', 'legend-item');
    const button = el('button');
    button.type = 'button';
    button.title = e.fullLabel;
    const swatch = el('span', `swatch${e.dashed ? ' dashed' : ''}${e.filled ? ' filled' : ''}`);
    swatch.style.borderColor = e.color;
    if (e.filled) swatch.style.backgroundColor = e.color;
    button.append(swatch, el('span', 'legend-label', e.label));
    button.addEventListener('click', () => {
      const visible = !view.chart.isDatasetVisible(i);
      view.chart.setDatasetVisibility(i, visible);
      item.classList.toggle('hidden', !visible);
      view.chart.update();
    });
    item.append(button);
    view.legend.append(item);
  });
}

function show(view: View, datasets: ChartDataset<'line' | 'bar' | 'scatter', { x: number; y: number }[]>[], reason: string | undefined): void {
  view.chart.data.datasets = datasets;
  view.canvas.setAttribute(
    'aria-label',
    chartSummary(
      view,
      datasets.map((d) => ({ label: d.label ?? '', data: d.data })),
      reason,
    ),
  );
  view.legend.hidden = !showLegend(datasets.length);
  view.chart.update();
  const points = datasets.reduce((n, d) => n + d.data.length, 0);
  view.box.dataset.points = String(points);
  view.box.dataset.minRadius = String(Math.min(...datasets.map((d) => ('pointRadius' in d && typeof d.pointRadius === 'number' ? d.pointRadius : 0)), 99));
  view.empty.textContent = reason ?? '';
  view.box.classList.toggle('is-empty', reason !== undefined);
}

function drawPanel(panel: Panel, series: readonly RunSeries[]): void {
  const view = views.get(panel.id) ?? makeView(panel.id, panel.title, panel.unit, panel.evaluation ? 'scatter' : 'line', panel.rate === true, panel.drill);
  const lines = panelLines(panel, series);
  const datasets = lines.map((l) => ({
    runId: series[l.runIndex]?.run.id,
    label: l.label,
    data: l.data,
    borderColor: color(l.runIndex),
    backgroundColor: color(l.runIndex),
    borderDash: l.dashed ? [4, 3] : [],
    pointRadius: l.pointRadius,
    borderWidth: 1.5,
    ...(panel.evaluation ? { showLine: true } : {}),
  }));
  renderLegend(
    view,
    lines.map((l) => ({ label: l.label, fullLabel: l.fullLabel, color: color(l.runIndex), dashed: l.dashed })),
  );
  show(view, datasets, emptyReason(panel, series, lines.length));
  view.warnings.replaceChildren(...(panel.warnings?.(series) ?? []).map((w) => el('p', 'warning', showInvisibles(w))));
}

/** Every panel for these runs; a policy-loss metric's chart that no selected run recorded is hidden. */
function drawPanels(series: readonly RunSeries[]): void {
  const panels = panelsFor(series);
  for (const panel of panels) drawPanel(panel, series);
  const shown = new Set([...panels.map((p) => p.id), PHASE_PANEL.id]);
  for (const [id, view] of views) view.box.hidden = !shown.has(id);
}

function drawPhases(series: readonly RunSeries[]): void {
  const view = views.get(PHASE_PANEL.id) ?? makeView(PHASE_PANEL.id, PHASE_PANEL.title, PHASE_PANEL.unit, 'bar', false);
  const bars = phaseBars(series);
  const colorOf = (phase: string): string => color(PHASES.findIndex((p) => p.label === phase));
  const datasets = bars.map((b) => ({
    label: b.label,
    data: b.data,
    backgroundColor: colorOf(b.phase),
    borderColor: colorOf(b.phase),
    stack: String(b.runIndex),
    barPercentage: 1,
    categoryPercentage: 0.9,
  }));
  renderLegend(
    view,
    bars.map((b) => ({ label: b.label, fullLabel: b.fullLabel, color: colorOf(b.phase), dashed: false, filled: true })),
  );
  show(view, datasets, phaseEmptyReason(series, bars.length));
}

/** A sparkline of the series behind a finding (points from the view model: numbers only). */
function sparkline(points: string, label: string): SVGSVGElement {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', '0 0 100 20');
  svg.setAttribute('class', 'spark');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', showInvisibles(label));
  const line = document.createElementNS(ns, 'polyline');
  line.setAttribute('points', points);
  svg.append(line);
  return svg;
}

/** The Health section: each finding's severity, what it is and its iterations, its summary, and "show me" links that open its episodes in the inspector. */
function drawHealth(series: readonly RunSeries[]): void {
  const box = document.getElementById('health');
  if (!box) return;
  const rows = healthRows(series);
  const empty = healthEmpty(series, rows);
  box.replaceChildren(el('h2', undefined, 'Health'));
  if (empty !== undefined) {
    box.append(el('p', 'empty-note', empty));
    return;
  }
  const list = el('ul', 'health-list');
  for (const r of rows) {
    const item = el('li', `finding ${r.severity}`);
    const head = el('span', 'finding-head', `${r.severity} · ${r.id} · ${r.iterations}${r.run ? ` · ${r.run}` : ''}`);
    item.append(head, el('span', 'finding-summary', r.summary));
    if (r.spark) item.append(sparkline(r.spark, `${r.id}: the series behind it`));
    if (r.episodes.length) {
      const links = el('span', 'finding-episodes', 'show me: ');
      for (const id of r.episodes) {
        const b = el('button', 'open-trajectory', `trajectory ${id}`);
        b.title = `Open trajectory ${id} in the inspector`;
        b.addEventListener('click', () => vscode.post({ type: 'openTrajectory', trajectoryId: id }));
        links.append(b, ' ');
      }
      item.append(links);
    }
    list.append(item);
  }
  box.append(list);
}

/** Under the picker: how the selected runs' models held their base weights (8 bits, bfloat16, float32), where recorded. */
function renderBaseWeights(series: readonly RunSeries[]): void {
  const box = document.getElementById('run-weights');
  if (!box) return;
  const note = baseWeightsNote(series);
  box.textContent = note ?? '';
  box.hidden = note === undefined;
}

function renderRunPicker(runs: RunSeries['run'][], selected: readonly number[]): void {
  const box = document.getElementById('runs')!;
  box.replaceChildren();
  // The newest 50, and every selected run even when it is older.
  const shown = runs.filter((r, i) => i < 50 || selected.includes(r.id));
  for (const r of shown) {
    const label = el('label');
    label.title = showInvisibles(`${r.name} (run ${r.id}) — ${r.env} · ${r.policy} · ${r.methodLabel}`);
    const input = el('input');
    input.type = 'checkbox';
    input.checked = selected.includes(r.id);
    input.dataset.run = String(r.id);
    input.addEventListener('change', () => {
      const ids = [...box.querySelectorAll<HTMLInputElement>('input:checked')].map((i) => Number(i.dataset.run)).slice(0, 20);
      vscode.setState({ selected: ids });
      vscode.post({ type: 'select', runIds: ids });
    });
    input.addEventListener('keydown', (ev) => {
      const inputs = [...box.querySelectorAll<HTMLInputElement>('input[type="checkbox"]')];
      const at = inputs.indexOf(input);
      const step = ev.key === 'ArrowDown' || ev.key === 'ArrowRight' ? 1 : ev.key === 'ArrowUp' || ev.key === 'ArrowLeft' ? -1 : 0;
      const to = ev.key === 'Home' ? 0 : ev.key === 'End' ? inputs.length - 1 : step !== 0 ? at + step : -1;
      if (inputs[to]) {
        ev.preventDefault();
        inputs[to].focus();
      }
    });
    label.append(input, el('span', undefined, `${oneLine(r.name, 40)} (${oneLine(r.status, 20)}, ${r.iterationsDone}/${r.iterationsPlanned})`));
    box.append(label);
  }
}

/** The last state drawn: a theme change draws it again in the new theme's colours. */
let lastState: { readonly series: readonly RunSeries[] } | undefined;

/** Axis text and grid in the theme's colours (chart.js paints a canvas: CSS does not reach it). */
function themeAxes(chart: Chart): void {
  const fg = css('--vscode-foreground', '#ccc');
  const grid = css('--vscode-editorWidget-border', '#444');
  for (const scale of Object.values(chart.options.scales ?? {})) {
    if (!scale) continue;
    if (scale.ticks) scale.ticks.color = fg;
    if ('title' in scale && scale.title) scale.title.color = fg;
    if (scale.grid) scale.grid.color = grid;
  }
}

onThemeChange(() => {
  for (const v of views.values()) themeAxes(v.chart);
  if (lastState) {
    drawPanels(lastState.series);
    drawPhases(lastState.series);
  } else for (const v of views.values()) v.chart.update();
});

onHostMessage(isHostToDashboard, (msg) => {
  if (msg.type === 'drill') {
    const name = drawn.find((s) => s.run.id === msg.runId)?.run.name ?? `run ${msg.runId}`;
    showDrill(msg, name, (trajectoryId, turn, token) => vscode.post({ type: 'openToken', trajectoryId, focus: { turn, token } }));
    return;
  }
  drawn = msg.series;
  lastState = msg;
  vscode.setState({ selected: msg.selected });
  renderRunPicker(msg.runs, msg.selected);
  renderBaseWeights(msg.series);
  drawHealth(msg.series);
  drawPanels(msg.series);
  drawPhases(msg.series);
});

// Compare Runs' section (comparison.ts)
startComparison((m) => vscode.post(m));

vscode.post({ type: 'ready' });
