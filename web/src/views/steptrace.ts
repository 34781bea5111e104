// Cluster step trace: per rank, its step as stacked bars of data loading / forward / backward /
// optimizer / other (CPU phases, which add up to the step), with its communication wait (the
// exposed communication of the step, which overlaps those phases) as a bar beside it; one step,
// or the median over steps. Sortable by any phase.
import { Charts } from '../charts';
import { clear, h, PHASE_COLORS } from '../dom';
import type { Overview, Phases } from '../types';
import { registerView, type ViewContext } from './registry';

const charts = new Charts();
const PHASES = ['data_loading', 'forward', 'backward', 'optimizer', 'other'];

interface Row {
  rank: number;
  host: string;
  phases: Phases;
  comm_wait: number;
  total: number | null;
}

function rowsFor(o: Overview, step: number | 'median'): Row[] {
  if (step === 'median') {
    return (o.cluster?.ranks ?? []).filter((r) => r.cpu_phases_ns).map((r) => ({ rank: r.rank, host: r.host, phases: r.cpu_phases_ns!, comm_wait: r.comm_wait_ns, total: r.step_ns }));
  }
  const out: Row[] = [];
  for (const r of o.ranks) {
    const s = r.steps.find((x) => x.number === step);
    if (s) out.push({ rank: r.rank, host: r.host_name ?? '', phases: s.cpu_phases_ns, comm_wait: s.comm_exposed_ns, total: s.duration_ns });
  }
  return out;
}

registerView({
  id: 'steptrace',
  title: 'Step trace',
  order: 20,
  available: (o) => (o.ranks.some((r) => r.steps.length) ? true : 'no profiler steps in the window'),
  render(el: HTMLElement, ctx: ViewContext) {
    const o = ctx.overview;
    const steps = Array.from(new Set(o.ranks.flatMap((r) => r.steps.map((s) => s.number)))).sort((a, b) => a - b);
    let step: number | 'median' = ctx.params.step ?? (o.cluster ? 'median' : steps[0]);
    let sort = 'rank';
    const chartBox = h('div', { class: 'chart tall', id: 'steptrace-chart' });
    const stepSel = h('select', { id: 'steptrace-step' },
      o.cluster ? h('option', { value: 'median' }, 'median over steps') : null,
      steps.map((s) => h('option', { value: String(s) }, `step ${s}`)));
    stepSel.value = String(step);
    const sortSel = h('select', { id: 'steptrace-sort' },
      h('option', { value: 'rank' }, 'by rank'), h('option', { value: 'total' }, 'by step time'),
      h('option', { value: 'comm_wait' }, 'by communication wait'),
      PHASES.map((p) => h('option', { value: p }, `by ${p.replace('_', ' ')}`)));
    stepSel.addEventListener('change', () => { step = stepSel.value === 'median' ? 'median' : Number(stepSel.value); draw(); });
    sortSel.addEventListener('change', () => { sort = sortSel.value; draw(); });
    el.append(
      h('div', { class: 'controls' }, stepSel, sortSel),
      h('p', { class: 'muted' }, 'CPU phases of the step (they add up to the step; medians of each phase for "median"), and beside them the time the rank waits in collectives.'),
      chartBox,
    );

    function draw() {
      charts.disposeAll();
      clear(chartBox);
      const rows = rowsFor(o, step);
      const key = (r: Row) => (sort === 'rank' ? -r.rank : sort === 'total' ? r.total ?? 0 : sort === 'comm_wait' ? r.comm_wait : r.phases[sort] ?? 0);
      rows.sort((a, b) => key(a) - key(b));  // the chart draws the first category at the bottom
      chartBox.style.height = `${Math.max(320, Math.min(rows.length * 22 + 80, 900))}px`;
      const labels = rows.map((r) => `rank ${r.rank}`);
      const series = PHASES.map((p) => ({
        name: p.replace('_', ' '),
        type: 'bar',
        stack: 'phases',
        barCategoryGap: '25%',
        itemStyle: { color: PHASE_COLORS[p] },
        data: rows.map((r) => (r.phases[p] ?? 0) / 1e6),
        large: rows.length > 500,
      }));
      const chart = charts.add(chartBox, {
        grid: { left: 90, right: 30, top: 40, bottom: 40 },
        legend: { top: 0 },
        tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' }, valueFormatter: (v: number) => `${v.toFixed(2)} ms` },
        xAxis: { type: 'value', name: 'ms', nameLocation: 'middle', nameGap: 25 },
        yAxis: { type: 'category', data: labels },
        dataZoom: rows.length > 40 ? [{ type: 'slider', yAxisIndex: 0, startValue: Math.max(0, rows.length - 40), endValue: rows.length - 1, right: 0, width: 14 }, { type: 'inside', yAxisIndex: 0 }] : [],
        series: [
          ...series,
          { name: 'communication wait', type: 'bar', itemStyle: { color: PHASE_COLORS.comm_wait }, data: rows.map((r) => r.comm_wait / 1e6), barGap: '10%' },
        ],
      });
      chart.on('click', (p) => {
        const rank = rows[(p as unknown as { dataIndex: number }).dataIndex]?.rank;
        if (rank !== undefined) ctx.navigate('timeline', { rank, step: step === 'median' ? null : step });
      });
    }
    draw();
  },
  dispose: () => charts.disposeAll(),
});
