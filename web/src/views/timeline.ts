// Timeline (Marey view) of one step: a lane per rank on the reference clock (each host's clock
// offset removed by the engine), its step, the span of its GPU work, and its collective
// instances; the same instance is joined across the ranks that took part, so a late arriver
// bends every line towards it. Its arrival is marked red. Drag to zoom, double-click to reset.
import { ABNORMAL, clear, errorBox, h, OP_COLORS, sizeCanvas } from '../dom';
import { fmtNs } from '../format';
import type { Timeline, TimelineLane } from '../types';
import { needsCluster, registerView, type ViewContext } from './registry';

const GUTTER = 120;
const AXIS_H = 26;

let cleanup: () => void = () => {};

function laneHeight(n: number): number {
  return n <= 24 ? 24 : n <= 64 ? 12 : n <= 256 ? 6 : 3;
}

function summary(t: Timeline, selected: number | null): HTMLElement {
  const lanes = t.ranks;
  const withArrival = t.collectives.filter((c) => c.skew_ns !== undefined);
  let worst: TimelineLane | null = null;
  for (const l of lanes) if (l.last_votes > 0 && (!worst || l.last_votes > worst.last_votes)) worst = l;
  const sel = lanes.find((l) => l.rank === selected);
  const maxSkew = withArrival.reduce((m, c) => Math.max(m, c.skew_ns ?? 0), 0);
  return h(
    'p',
    { id: 'timeline-summary', 'data-late-rank': worst ? worst.rank : '' },
    `Step ${t.step}: ${lanes.length} ranks, ${t.collectives.length} matched collective instances. `,
    worst
      ? h('span', { class: 'late' }, `Last to arrive: rank ${worst.rank} (at ${worst.last_votes} of ${withArrival.length} instances). `)
      : 'No rank arrived last more than the others. ',
    withArrival.length ? `Largest arrival skew ${fmtNs(maxSkew)}. ` : '',
    sel ? h('span', { class: 'selected-note' }, `Rank ${sel.rank} (highlighted) arrived last at ${sel.last_votes}.`) : null,
    t.omitted_spans ? h('span', { class: 'muted' }, ` ${t.omitted_spans} spans not shown (bound).`) : null,
  );
}

function drawTimeline(box: HTMLElement, t: Timeline, selected: number | null): () => void {
  const lanes = t.ranks.slice().sort((a, b) => a.rank - b.rank);
  const laneH = laneHeight(lanes.length);
  const canvas = h('canvas', { id: 'timeline-canvas' });
  const tip = h('div', { class: 'tooltip', hidden: true });
  const scroller = h('div', { class: 'timeline-scroll' }, canvas);
  box.append(scroller, tip);
  const laneOf = new Map(lanes.map((l, i) => [l.rank, i]));
  let full: [number, number] = [Infinity, -Infinity];
  for (const l of lanes) {
    full = [Math.min(full[0], l.start_ns), Math.max(full[1], l.end_ns)];
    for (const s of l.spans) full = [Math.min(full[0], s[0]), Math.max(full[1], s[1])];
  }
  let domain: [number, number] = [full[0], full[1]];
  // Participants of each collective by lane, for the lines that join them.
  const joined = new Map<number, [number, number][]>();
  lanes.forEach((l, i) => {
    for (const s of l.spans) if (s[3] !== null) {
      const v = joined.get(s[3]) ?? [];
      v.push([i, s[0]]);
      joined.set(s[3], v);
    }
  });
  const maxVotes = Math.max(0, ...lanes.map((l) => l.last_votes));
  let brush: [number, number] | null = null;
  const height = AXIS_H + lanes.length * laneH + 8;

  function width() {
    return Math.max(600, box.clientWidth - 4);
  }
  const x = (ns: number) => GUTTER + ((ns - domain[0]) / (domain[1] - domain[0] || 1)) * (width() - GUTTER - 10);
  const ns = (px: number) => domain[0] + ((px - GUTTER) / (width() - GUTTER - 10)) * (domain[1] - domain[0]);

  function draw() {
    const w = width();
    const g = sizeCanvas(canvas, w, height);
    g.clearRect(0, 0, w, height);
    g.font = '11px system-ui, sans-serif';
    g.textBaseline = 'middle';
    // Axis: ms from the step's earliest start.
    g.fillStyle = '#444';
    g.strokeStyle = '#ddd';
    const ticks = 8;
    for (let k = 0; k <= ticks; k++) {
      const v = domain[0] + ((domain[1] - domain[0]) * k) / ticks;
      const px = x(v);
      g.beginPath();
      g.moveTo(px, AXIS_H - 4);
      g.lineTo(px, height);
      g.stroke();
      g.fillText(`${(v / 1e6).toFixed(domain[1] - domain[0] < 5e6 ? 2 : 1)} ms`, Math.min(px - 14, w - 50), 10);
    }
    g.save();
    g.beginPath();
    g.rect(GUTTER, AXIS_H, w - GUTTER, height - AXIS_H);
    g.clip();
    lanes.forEach((l, i) => {
      const y = AXIS_H + i * laneH;
      if (l.rank === selected) {
        g.fillStyle = '#fff3bf';
        g.fillRect(GUTTER, y, w - GUTTER, laneH);
      } else if (l.last_votes === maxVotes && maxVotes > 0) {
        g.fillStyle = 'rgba(214,39,40,0.12)';  // the late arriver's lane stands out among thousands
        g.fillRect(GUTTER, y, w - GUTTER, laneH);
      }
      g.fillStyle = '#e3e6ea';
      g.fillRect(x(l.start_ns), y + 1, x(l.end_ns) - x(l.start_ns), Math.max(1, laneH - 2));
      if (l.gpu_start_ns !== null && l.gpu_end_ns !== null && laneH >= 6) {
        g.fillStyle = '#9fb7d6';
        g.fillRect(x(l.gpu_start_ns), y + laneH - 3, x(l.gpu_end_ns) - x(l.gpu_start_ns), 2);
      }
      for (const s of l.spans) {
        g.fillStyle = OP_COLORS[s[2] % OP_COLORS.length];
        const x0 = x(s[0]);
        g.fillRect(x0, y + laneH * 0.2, Math.max(1, x(s[1]) - x0), Math.max(1, laneH * 0.6));
      }
    });
    // The same instance joined across ranks, at each rank's arrival (the start of its part).
    g.lineWidth = 1;
    g.strokeStyle = 'rgba(60,60,60,0.45)';
    for (const pts of joined.values()) {
      if (pts.length < 2) continue;
      g.beginPath();
      pts.forEach(([i, start], k) => {
        const px = x(start);
        const py = AXIS_H + i * laneH + laneH / 2;
        if (k === 0) g.moveTo(px, py);
        else g.lineTo(px, py);
      });
      g.stroke();
    }
    // Last arrivers, in red.
    g.fillStyle = ABNORMAL;
    t.collectives.forEach((c, id) => {
      if (c.last_rank === null || c.last_rank === undefined) return;
      const pts = joined.get(id);
      const i = laneOf.get(c.last_rank);
      const p = pts?.find(([lane]) => lane === i);
      if (!p || i === undefined) return;
      g.beginPath();
      g.arc(x(p[1]), AXIS_H + i * laneH + laneH / 2, Math.max(2.5, Math.min(5, laneH / 2)), 0, Math.PI * 2);
      g.fill();
    });
    g.restore();
    // Lane labels: every lane when there is room, else every few lanes, and always the late
    // arriver's and the selected rank's.
    const every = Math.max(1, Math.ceil(12 / laneH));
    const special = lanes.map((l, i) => ((l.last_votes === maxVotes && maxVotes > 0) || l.rank === selected ? i : -1)).filter((i) => i >= 0);
    lanes.forEach((l, i) => {
      const late = l.last_votes === maxVotes && maxVotes > 0;
      const mine = late || l.rank === selected;
      if (!mine && (i % every !== 0 || special.some((j) => Math.abs(j - i) * laneH < 12))) return;
      const y = AXIS_H + i * laneH + laneH / 2;
      g.fillStyle = late ? ABNORMAL : l.rank === selected ? '#b35c00' : '#333';
      g.font = late || l.rank === selected ? 'bold 11px system-ui, sans-serif' : '11px system-ui, sans-serif';
      g.fillText(`rank ${l.rank}${laneH >= 12 ? ` ${l.host.slice(0, 10)}` : ''}`, 4, y);
    });
    if (brush) {
      g.fillStyle = 'rgba(31,119,180,0.15)';
      g.fillRect(Math.min(brush[0], brush[1]), AXIS_H, Math.abs(brush[1] - brush[0]), height - AXIS_H);
    }
  }

  const pos = (ev: MouseEvent) => {
    const r = canvas.getBoundingClientRect();
    return [ev.clientX - r.left, ev.clientY - r.top] as const;
  };
  canvas.addEventListener('mousedown', (ev) => {
    const [px] = pos(ev);
    if (px > GUTTER) brush = [px, px];
  });
  canvas.addEventListener('mousemove', (ev) => {
    const [px, py] = pos(ev);
    if (brush) {
      brush[1] = px;
      draw();
      return;
    }
    const i = Math.floor((py - AXIS_H) / laneH);
    const l = lanes[i];
    const at = ns(px);
    const s = l?.spans.find((sp) => sp[0] <= at && at <= sp[1]);
    if (!l || !s) {
      tip.hidden = true;
      return;
    }
    const c = s[3] !== null ? t.collectives[s[3]] : null;
    tip.textContent = `rank ${l.rank} · ${t.ops[s[2]]} · ${fmtNs(s[1] - s[0])}` +
      (c ? ` · ${c.participants} ranks${c.last_rank !== null ? `, last: rank ${c.last_rank}` : ''}${c.skew_ns !== undefined ? `, skew ${fmtNs(c.skew_ns)}` : ''}` : ' · not matched');
    tip.hidden = false;
    tip.style.left = `${ev.pageX + 12}px`;
    tip.style.top = `${ev.pageY + 12}px`;
  });
  const endBrush = () => {
    if (!brush) return;
    const [a, b] = [Math.min(...brush), Math.max(...brush)];
    brush = null;
    if (b - a > 4) domain = [ns(a), ns(b)];
    draw();
  };
  canvas.addEventListener('mouseup', endBrush);
  canvas.addEventListener('mouseleave', () => {
    tip.hidden = true;
    endBrush();
  });
  canvas.addEventListener('dblclick', () => {
    domain = [full[0], full[1]];
    draw();
  });
  window.addEventListener('resize', draw);
  draw();
  // Show the selected rank's lane, else the late arriver's.
  let i = lanes.findIndex((l) => l.rank === selected);
  if (i < 0 && maxVotes > 0) i = lanes.findIndex((l) => l.last_votes === maxVotes);
  if (i >= 0) scroller.scrollTop = Math.max(0, AXIS_H + i * laneH - scroller.clientHeight / 2);
  return () => window.removeEventListener('resize', draw);
}

registerView({
  id: 'timeline',
  title: 'Timeline',
  order: 30,
  available: needsCluster,
  async render(el: HTMLElement, ctx: ViewContext) {
    let t: Timeline;
    t = await ctx.source.doc<Timeline>(ctx.jobId, 'timeline', ctx.params.step ?? null);
    if (t.error || t.step === null) {
      el.append(errorBox(t.error ?? 'no timeline'));
      return;
    }
    const stepSel = h('select', { id: 'timeline-step' }, t.steps.map((s) => h('option', { value: String(s) }, `step ${s}`)));
    stepSel.value = String(t.step);
    stepSel.addEventListener('change', () => ctx.navigate('timeline', { rank: ctx.params.rank ?? null, step: Number(stepSel.value) }));
    const box = h('div', { class: 'timeline-box' });
    el.append(
      h('div', { class: 'controls' }, stepSel, h('span', { class: 'muted' }, `Reference clock: ${t.reference_host ?? '–'}. Drag across the lanes to zoom, double-click to reset. Red dot: the last rank to arrive at an instance.`)),
      summary(t, ctx.params.rank ?? null),
      h('div', { class: 'legend' }, t.ops.map((op, i) => h('span', { class: 'legend-item' }, h('span', { class: 'swatch', style: `background:${OP_COLORS[i % OP_COLORS.length]}` }), op)),
        h('span', { class: 'legend-item' }, h('span', { class: 'swatch', style: 'background:#e3e6ea' }), 'step'),
        h('span', { class: 'legend-item' }, h('span', { class: 'swatch', style: 'background:#9fb7d6' }), 'GPU work')),
      box,
    );
    clear(box);
    cleanup = drawTimeline(box, t, ctx.params.rank ?? null);
  },
  dispose() {
    cleanup();
    cleanup = () => {};
  },
});
