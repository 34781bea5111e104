// Functions across ranks: for the heaviest kernels, memory operations, runtime calls, CPU ops,
// Python paths and collectives, the distribution of their time per step over the ranks (box and
// one dot per rank) and the ranks the engine found abnormal, in red.
import { Charts } from '../charts';
import { ABNORMAL, clear, h } from '../dom';
import { fmtNs } from '../format';
import type { FunctionSpread, SpreadFunction } from '../types';
import { needsCluster, registerView, type ViewContext } from './registry';

const charts = new Charts();
const SHOWN = 25;

function shortName(f: SpreadFunction): string {
  const n = f.name.length > 60 ? `${f.name.slice(0, 57)}…` : f.name;
  return f.detail && f.detail.length < 30 ? `${n} [${f.detail}]` : n;
}

registerView({
  id: 'functions',
  title: 'Functions',
  order: 50,
  available: needsCluster,
  async render(el: HTMLElement, ctx: ViewContext) {
    const doc = await ctx.source.doc<FunctionSpread>(ctx.jobId, 'functions');
    const kinds = doc.kinds.filter((k) => k.functions.length);
    if (!kinds.length) {
      el.append(h('p', { class: 'muted' }, 'No function was recorded on the ranks.'));
      return;
    }
    const withOutliers = kinds.find((k) => k.functions.some((f) => f.outliers.length));
    let kind = (withOutliers ?? kinds[0]).kind;
    const sel = h('select', { id: 'functions-kind' }, kinds.map((k) => h('option', { value: k.kind }, `${k.kind.replace('_', ' ')}s (${k.functions.length}${k.omitted ? ` of ${k.functions.length + k.omitted}` : ''})`)));
    sel.value = kind;
    sel.addEventListener('change', () => { kind = sel.value; draw(); });
    const chartBox = h('div', { class: 'chart tall', id: 'functions-chart' });
    const table = h('div', {});
    el.append(h('div', { class: 'controls' }, sel, h('span', { class: 'muted' }, `time per ${doc.unit} on each rank; box: quartiles, whiskers: min and max; red: abnormal rank (engine).`)), chartBox, table);

    function draw() {
      charts.disposeAll();
      clear(table);
      const fs = kinds.find((k) => k.kind === kind)!.functions.slice(0, SHOWN).reverse();  // heaviest at the top
      chartBox.style.height = `${Math.max(300, fs.length * 28 + 80)}px`;
      const names = fs.map(shortName);
      const dots: [number, number, number][] = [];
      const red: [number, number, number][] = [];
      fs.forEach((f, i) => {
        const bad = new Set(f.outliers.map((o) => o.rank));
        f.values_ns.forEach((v, r) => {
          if (v === null) return;
          const rank = doc.ranks[r];
          (bad.has(rank) ? red : dots).push([v / 1e6, i, rank]);
        });
      });
      charts.add(chartBox, {
        grid: { left: 330, right: 30, top: 30, bottom: 40 },
        legend: { top: 0 },
        tooltip: { trigger: 'item', formatter: (p: { seriesType: string; value: number[]; name: string }) => (p.seriesType === 'scatter' ? `rank ${p.value[2]}: ${p.value[0].toFixed(3)} ms` : p.name) },
        xAxis: { type: 'value', name: `ms per ${doc.unit}`, nameLocation: 'middle', nameGap: 25 },
        yAxis: { type: 'category', data: names, axisLabel: { width: 320, overflow: 'truncate' } },
        series: [
          { name: 'ranks', type: 'boxplot', itemStyle: { color: '#dde8f5', borderColor: '#1f77b4' }, data: fs.map((f) => [f.min_ns, f.q1_ns, f.median_ns, f.q3_ns, f.max_ns].map((v) => v / 1e6)) },
          { name: 'rank', type: 'scatter', symbolSize: 4, itemStyle: { color: '#1f77b4', opacity: 0.5 }, data: dots, large: dots.length > 5000 },
          { name: 'abnormal rank', type: 'scatter', symbolSize: 9, itemStyle: { color: ABNORMAL }, data: red },
        ],
      });
      const outliers = kinds.find((k) => k.kind === kind)!.functions.filter((f) => f.outliers.length);
      if (outliers.length) {
        table.append(h('h2', {}, 'Outliers'), h('table', { class: 'table', id: 'function-outliers' },
          h('thead', {}, h('tr', {}, h('th', {}, 'function'), h('th', {}, 'rank'), h('th', {}, 'time per step'), h('th', {}, 'median rank'), h('th', {}, 'excess'))),
          h('tbody', {}, outliers.flatMap((f) => f.outliers.map((o) => h('tr', {},
            h('td', { class: 'fn', title: `${f.name} ${f.detail}` }, shortName(f)),
            h('td', {}, h('a', { href: '#', onclick: (e: Event) => { e.preventDefault(); ctx.navigate('heatmap', { rank: o.rank }); } }, `rank ${o.rank}`)),
            h('td', { class: 'num' }, fmtNs(o.value_ns)), h('td', { class: 'num' }, fmtNs(f.median_ns)), h('td', { class: 'num' }, fmtNs(o.excess_ns))))))));
      }
    }
    draw();
  },
  dispose: () => charts.disposeAll(),
});
