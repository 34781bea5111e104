// Communication matrix: rank x rank (or host x host, or blocks of ranks beyond 256) time, bytes,
// bandwidth or count of the matched collectives and point-to-point transfers, with host
// boundaries drawn and the intra- vs inter-host totals.
import { clear, h, heatColor, sizeCanvas } from '../dom';
import { fmtBytes, fmtCount, fmtNs } from '../format';
import type { Matrix, MatrixTotals } from '../types';
import { needsCluster, registerView, type ViewContext } from './registry';

type Metric = 'time_ns' | 'bytes' | 'bandwidth_gbps' | 'count';
const LABEL = 70;

function fmt(metric: Metric, v: number | null): string {
  if (v === null) return '–';
  if (metric === 'time_ns') return fmtNs(v);
  if (metric === 'bytes') return fmtBytes(v);
  if (metric === 'bandwidth_gbps') return `${v.toFixed(2)} GB/s`;
  return fmtCount(v);
}

function totalsRow(name: string, t: MatrixTotals): HTMLElement {
  return h('tr', {}, h('th', {}, name), h('td', { class: 'num' }, fmtCount(t.count)), h('td', { class: 'num' }, fmtBytes(t.bytes)), h('td', { class: 'num' }, fmtNs(t.time_ns)), h('td', { class: 'num' }, t.bandwidth_gbps === null ? '–' : `${t.bandwidth_gbps.toFixed(2)} GB/s`));
}

let cleanup: () => void = () => {};

registerView({
  id: 'matrix',
  title: 'Communication',
  order: 40,
  available: needsCluster,
  async render(el: HTMLElement, ctx: ViewContext) {
    const m = await ctx.source.doc<Matrix>(ctx.jobId, 'matrix');
    let metric: Metric = 'time_ns';
    const sel = h('select', { id: 'matrix-metric' },
      h('option', { value: 'time_ns' }, 'time'), h('option', { value: 'bytes' }, 'bytes'),
      h('option', { value: 'bandwidth_gbps' }, 'bandwidth'), h('option', { value: 'count' }, 'pairs (count)'));
    sel.addEventListener('change', () => { metric = sel.value as Metric; draw(); });
    const canvas = h('canvas', { id: 'matrix-canvas' });
    const tip = h('div', { class: 'tooltip', hidden: true });
    const box = h('div', { class: 'matrix-box' }, canvas);
    el.append(
      h('div', { class: 'controls' }, sel, h('span', { class: 'muted' }, `${m.instances} matched instances, per ${m.level}. Row = a rank's own part (its bytes, its time) in transfers with the column; a collective counts for every pair of its participants. Dark lines: host boundaries.`)),
      h('table', { class: 'table compact', id: 'matrix-totals' },
        h('thead', {}, h('tr', {}, h('th', {}, ''), h('th', {}, 'pairs'), h('th', {}, 'bytes'), h('th', {}, 'time'), h('th', {}, 'bandwidth'))),
        h('tbody', {}, totalsRow('intra-host', m.intra_host), totalsRow('inter-host', m.inter_host), totalsRow('collectives', m.collectives), totalsRow('point-to-point', m.point_to_point))),
      m.unknown_bytes ? h('p', { class: 'muted' }, `${m.unknown_bytes} instance parts without a known size count 0 bytes.`) : '',
      box, tip,
    );
    const k = m.labels.length;
    function values(): (number | null)[][] {
      return m[metric] as (number | null)[][];
    }
    function geometry() {
      const side = Math.min(Math.max(300, el.clientWidth - LABEL - 20), 900);
      return { side, cell: side / Math.max(1, k) };
    }
    function draw() {
      const { side, cell } = geometry();
      const g = sizeCanvas(canvas, side + LABEL, side + LABEL);
      g.clearRect(0, 0, side + LABEL, side + LABEL);
      const v = values();
      let max = 0;
      for (const row of v) for (const x of row) if (x !== null && x > max) max = x;
      for (let a = 0; a < k; a++) {
        for (let b = 0; b < k; b++) {
          const x = v[a][b];
          g.fillStyle = a === b && m.level === 'rank' ? '#f4f4f4' : x === null || x === 0 ? '#fbfbfb' : heatColor(max > 0 ? Math.sqrt(x / max) : 0);
          g.fillRect(LABEL + b * cell, LABEL + a * cell, Math.ceil(cell), Math.ceil(cell));
        }
      }
      // Host boundaries.
      g.strokeStyle = '#333';
      g.lineWidth = 1;
      for (let i = 1; i < k; i++) {
        if (m.hosts[i] !== m.hosts[i - 1] || m.level !== 'rank') {
          if (m.level !== 'rank') continue;
          g.beginPath();
          g.moveTo(LABEL + i * cell, LABEL);
          g.lineTo(LABEL + i * cell, LABEL + side);
          g.moveTo(LABEL, LABEL + i * cell);
          g.lineTo(LABEL + side, LABEL + i * cell);
          g.stroke();
        }
      }
      g.fillStyle = '#333';
      g.font = '10px system-ui, sans-serif';
      g.textBaseline = 'middle';
      const every = Math.ceil(12 / cell);
      for (let i = 0; i < k; i += every) {
        g.fillText(m.labels[i].slice(0, 10), 2, LABEL + i * cell + cell / 2);
        g.save();
        g.translate(LABEL + i * cell + cell / 2, LABEL - 4);
        g.rotate(-Math.PI / 2);
        g.fillText(m.labels[i].slice(0, 10), 0, 0);
        g.restore();
      }
    }
    canvas.addEventListener('mousemove', (ev) => {
      const r = canvas.getBoundingClientRect();
      const { cell } = geometry();
      const a = Math.floor((ev.clientY - r.top - LABEL) / cell);
      const b = Math.floor((ev.clientX - r.left - LABEL) / cell);
      if (a < 0 || b < 0 || a >= k || b >= k) {
        tip.hidden = true;
        return;
      }
      const intra = m.hosts[a] !== '' && m.hosts[a] === m.hosts[b];
      tip.textContent = `${m.labels[a]} → ${m.labels[b]} (${intra ? 'intra-host' : 'inter-host'}): ${fmt('time_ns', m.time_ns[a][b])}, ${fmt('bytes', m.bytes[a][b])}, ${fmt('bandwidth_gbps', m.bandwidth_gbps[a][b])}, ${fmt('count', m.count[a][b])} pairs`;
      tip.hidden = false;
      tip.style.left = `${ev.pageX + 12}px`;
      tip.style.top = `${ev.pageY + 12}px`;
    });
    canvas.addEventListener('mouseleave', () => (tip.hidden = true));
    canvas.addEventListener('click', (ev) => {
      if (m.level !== 'rank') return;
      const r = canvas.getBoundingClientRect();
      const a = Math.floor((ev.clientY - r.top - LABEL) / geometry().cell);
      if (a >= 0 && a < k) ctx.navigate('heatmap', { rank: Number(m.labels[a]) });
    });
    window.addEventListener('resize', draw);
    cleanup = () => window.removeEventListener('resize', draw);
    clear(box).append(canvas);
    draw();
  },
  dispose() {
    cleanup();
    cleanup = () => {};
  },
});
