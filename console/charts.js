// Live charts with uPlot (served from node_modules at vendor/, a global `uPlot`): a time series
// that grows by one point per poll and keeps the last few minutes.
import { fmtNumber } from './dom.js';

const WINDOW_POINTS = 150; // 5 min at one point per 2 s

const COLORS = ['#2b6cb0', '#c05621', '#2f855a', '#6b46c1', '#b83280', '#2c7a7b', '#975a16', '#4a5568'];

/**
 * A chart in `container` whose series are named by the values pushed: push(tSeconds, { label: value })
 * adds a point; a label not seen before adds a series (the chart is drawn again with it).
 * The container's data-points says how many points the chart holds, data-last the last values (for tests).
 */
export class LiveChart {
  constructor(container, { title, unit, format = fmtNumber, height = 220 }) {
    this.container = container;
    this.title = title;
    this.unit = unit;
    this.format = format;
    this.height = height;
    this.times = [];
    this.series = new Map(); // label → values aligned with times
    this.plot = null;
    this.resize = () => this.plot?.setSize(this.size());
    window.addEventListener('resize', this.resize);
  }

  size() {
    return { width: Math.max(this.container.clientWidth, 300), height: this.height };
  }

  push(t, values) {
    let newLabel = false;
    for (const label of Object.keys(values)) {
      if (!this.series.has(label)) {
        this.series.set(label, this.times.map(() => null));
        newLabel = true;
      }
    }
    this.times.push(t);
    for (const [label, arr] of this.series) arr.push(values[label] ?? null);
    if (this.times.length > WINDOW_POINTS) {
      this.times.shift();
      for (const arr of this.series.values()) arr.shift();
    }
    const data = [this.times, ...this.series.values()];
    if (newLabel || !this.plot) this.draw(data);
    else this.plot.setData(data);
    this.container.dataset.points = String(this.times.length);
    this.container.dataset.last = JSON.stringify(values);
  }

  draw(data) {
    this.plot?.destroy();
    const fmt = (_u, v) => (v === null || v === undefined ? '-' : `${this.format(v)} ${this.unit}`);
    this.plot = new window.uPlot({
      ...this.size(),
      title: this.title,
      scales: { x: { time: true }, y: { range: (_u, min, max) => [0, Math.max(max, 1) * 1.1] } },
      axes: [{}, { size: 70, values: (_u, ticks) => ticks.map((v) => this.format(v)) }],
      series: [{}, ...[...this.series.keys()].map((label, i) => ({ label, stroke: COLORS[i % COLORS.length], width: 2, value: fmt, spanGaps: true }))],
    }, data, this.container);
  }

  destroy() {
    window.removeEventListener('resize', this.resize);
    this.plot?.destroy();
    this.plot = null;
  }
}
