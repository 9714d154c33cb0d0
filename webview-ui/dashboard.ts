// Dashboard page (runs inside the webview). Draws one chart per metric with every selected run as a
// line; large runs are decimated (LTTB) so drawing stays fast. Colours come from the VS Code theme.
// All text from the host (run names, errors) is set with textContent, never as HTML.
import { Chart, Decimation, Legend, LinearScale, LineController, LineElement, PointElement, ScatterController, Tooltip } from 'chart.js';
import { isHostToDashboard, type DashboardState, type RunSeries } from '../src/shared/protocol/webviewProtocol';
import type { IterationMetrics } from '../src/shared/types';

Chart.register(LineController, ScatterController, LineElement, PointElement, LinearScale, Tooltip, Legend, Decimation);

declare function acquireVsCodeApi(): { postMessage(m: unknown): void; getState(): unknown; setState(s: unknown): void };
const vscode = acquireVsCodeApi();

interface Panel {
  readonly id: string;
  readonly title: string;
  /** One line per run and metric; `eval` plots evaluations instead of iterations. */
  readonly lines: { label: string; value: (m: IterationMetrics) => number | undefined }[];
  readonly evaluation?: boolean;
}

export const PANELS: readonly Panel[] = [
  { id: 'reward', title: 'Reward (mean, max)', lines: [{ label: 'mean', value: (m) => m.rewardMean }, { label: 'max', value: (m) => m.rewardMax }] },
  { id: 'success', title: 'Training success', lines: [{ label: 'success', value: (m) => m.successRate }] },
  { id: 'evaluation', title: 'Evaluation success', lines: [], evaluation: true },
  { id: 'hacking', title: 'Public test vs private verifier (reward-hacking gap)', lines: [{ label: 'public', value: (m) => m.publicPassRate }, { label: 'private', value: (m) => m.privatePassRate }] },
  { id: 'loss', title: 'Loss', lines: [{ label: 'loss', value: (m) => m.loss }, { label: 'policy', value: (m) => m.policyLoss }] },
  { id: 'kl', title: 'KL to reference', lines: [{ label: 'KL', value: (m) => m.kl }] },
  { id: 'clip', title: 'Clip fraction', lines: [{ label: 'all', value: (m) => m.clipFraction }, { label: 'low', value: (m) => m.clipFractionLow }, { label: 'high', value: (m) => m.clipFractionHigh }] },
  { id: 'entropy', title: 'Entropy', lines: [{ label: 'entropy', value: (m) => m.entropy }] },
  { id: 'length', title: 'Response tokens and turns', lines: [{ label: 'tokens', value: (m) => m.responseTokens }, { label: 'turns', value: (m) => m.meanTurns }] },
  { id: 'tools', title: 'Tool calls', lines: [{ label: 'calls', value: (m) => m.toolCalls }] },
];

const css = (name: string, fallback: string): string => getComputedStyle(document.body).getPropertyValue(name).trim() || fallback;
const PALETTE = ['--vscode-charts-blue', '--vscode-charts-red', '--vscode-charts-green', '--vscode-charts-yellow', '--vscode-charts-purple', '--vscode-charts-orange'];
const charts = new Map<string, Chart>();
let series: RunSeries[] = [];

interface Series {
  label: string;
  data: { x: number; y: number }[];
  borderColor: string;
  backgroundColor: string;
  borderDash?: number[];
  pointRadius: number;
  borderWidth?: number;
  showLine?: boolean;
}

function datasets(panel: Panel): Series[] {
  return series.flatMap((s, i): Series[] => {
    const color = css(PALETTE[i % PALETTE.length]!, '#3794ff');
    if (panel.evaluation) {
      return [{ label: `${s.run.name}`, data: s.evaluations.map((e) => ({ x: e.iteration, y: e.successRate })), borderColor: color, backgroundColor: color, showLine: true, pointRadius: 3 }];
    }
    return panel.lines
      .map((line, j) => ({
        label: panel.lines.length > 1 ? `${s.run.name} · ${line.label}` : s.run.name,
        data: s.iterations.map((m) => ({ x: m.iteration, y: line.value(m) })).filter((p): p is { x: number; y: number } => typeof p.y === 'number' && Number.isFinite(p.y)),
        borderColor: color,
        backgroundColor: color,
        borderDash: j === 0 ? [] : [4, 3],
        pointRadius: 0,
        borderWidth: 1.5,
      }))
      .filter((d) => d.data.length > 0);
  });
}

function draw(): void {
  const main = document.getElementById('charts')!;
  const fg = css('--vscode-foreground', '#ccc');
  const grid = css('--vscode-editorWidget-border', '#444');
  for (const panel of PANELS) {
    let chart = charts.get(panel.id);
    if (!chart) {
      const box = document.createElement('section');
      box.className = 'chart';
      box.dataset.metric = panel.id;
      const h = document.createElement('h2');
      h.textContent = panel.title;
      const canvas = document.createElement('canvas');
      box.append(h, canvas);
      main.append(box);
      chart = new Chart(canvas, {
        type: panel.evaluation ? 'scatter' : 'line',
        data: { datasets: [] },
        options: {
          animation: false,
          parsing: false,
          normalized: true,
          interaction: { mode: 'nearest', intersect: false },
          scales: { x: { type: 'linear', title: { display: true, text: 'iteration', color: fg }, ticks: { color: fg }, grid: { color: grid } }, y: { ticks: { color: fg }, grid: { color: grid } } },
          plugins: { legend: { labels: { color: fg, boxWidth: 12 } }, decimation: { enabled: true, algorithm: 'lttb', samples: 400 }, tooltip: { enabled: true } },
        },
      });
      charts.set(panel.id, chart);
    }
    chart.data.datasets = datasets(panel);
    chart.update();
    (chart.canvas.parentElement as HTMLElement).dataset.points = String(chart.data.datasets.reduce((n, d) => n + d.data.length, 0));
  }
}

function renderRunPicker(runs: RunSeries['run'][], selected: number[]): void {
  const box = document.getElementById('runs')!;
  box.replaceChildren();
  for (const r of runs.slice(0, 50)) {
    const label = document.createElement('label');
    const input = document.createElement('input');
    input.type = 'checkbox';
    input.checked = selected.includes(r.id);
    input.addEventListener('change', () => {
      const ids = [...box.querySelectorAll<HTMLInputElement>('input:checked')].map((i) => Number(i.dataset.run));
      vscode.setState({ selected: ids } satisfies DashboardState);
      vscode.postMessage({ type: 'select', runIds: ids.slice(0, 20) });
    });
    input.dataset.run = String(r.id);
    const text = document.createElement('span');
    text.textContent = `${r.name} (${r.status}, ${r.iterationsDone}/${r.iterationsPlanned})`;
    label.append(input, text);
    box.append(label);
  }
}

window.addEventListener('message', (event: MessageEvent<unknown>) => {
  const msg = event.data;
  if (!isHostToDashboard(msg)) return;
  series = msg.series;
  vscode.setState({ selected: msg.selected } satisfies DashboardState);
  renderRunPicker(msg.runs, msg.selected);
  draw();
});

vscode.postMessage({ type: 'ready' });
