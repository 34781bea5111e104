// Node telemetry: per node, CPU, memory, GPU utilization and power, PCIe/NVLink, network and
// disk over the captured window, the ranks' steps shaded.
import { Charts } from '../charts';
import { h } from '../dom';
import { fmtValue } from '../format';
import type { TelemetryDoc, TelemetryNode } from '../types';
import { registerView, type ViewContext } from './registry';

const charts = new Charts();

function nodeCharts(el: HTMLElement, n: TelemetryNode): void {
  const groups = new Map<string, typeof n.series>();
  for (const s of n.series) groups.set(s.chart, [...(groups.get(s.chart) ?? []), s]);
  const section = h('section', { class: 'node', 'data-host': n.host },
    h('h2', {}, n.host, h('span', { class: 'muted' }, `  ranks ${n.ranks.join(', ') || '–'}; steps of rank ${n.steps_of_rank ?? '–'} shaded; GPU: ${n.gpu}`)));
  el.append(section);
  if (n.warnings.length) section.append(h('ul', { class: 'warnings' }, n.warnings.map((w) => h('li', {}, w))));
  const steps = n.steps.map((s, i) => [
    { xAxis: s.start_ms, itemStyle: { color: i % 2 ? 'rgba(31,119,180,0.08)' : 'rgba(31,119,180,0.16)' }, name: `step ${s.number}` },
    { xAxis: s.end_ms },
  ]);
  for (const [chart, series] of groups) {
    const unit = series[0].unit;
    const box = h('div', { class: 'chart small', 'data-chart': chart });
    section.append(h('h3', {}, chart), box);
    charts.add(box, {
      grid: { left: 70, right: 20, top: 30, bottom: 30 },
      legend: { top: 0, type: 'scroll' },
      tooltip: { trigger: 'axis', valueFormatter: (v: number) => fmtValue(v, unit) },
      xAxis: { type: 'value', name: 'ms', min: 0, max: Math.ceil(n.duration_ms) },
      yAxis: { type: 'value', axisLabel: { formatter: (v: number) => fmtValue(v, unit) } },
      series: series.map((s, i) => ({
        name: s.name, type: 'line', showSymbol: false, data: s.points,
        ...(i === 0 ? { markArea: { silent: true, label: { show: false }, data: steps } } : {}),
      })),
    });
  }
}

registerView({
  id: 'telemetry',
  title: 'Node telemetry',
  order: 60,
  available: (o) => (o.telemetry ? true : 'no node telemetry was saved beside the traces (the node daemon saves telemetry.<host>.tsv with each capture)'),
  async render(el: HTMLElement, ctx: ViewContext) {
    const doc = await ctx.source.doc<TelemetryDoc>(ctx.jobId, 'telemetry');
    if (doc.warnings.length) el.append(h('ul', { class: 'warnings' }, doc.warnings.map((w) => h('li', {}, w))));
    if (!doc.nodes.length) el.append(h('p', { class: 'muted' }, 'No telemetry file could be read.'));
    for (const n of doc.nodes) nodeCharts(el, n);
  },
  dispose: () => charts.disposeAll(),
});
