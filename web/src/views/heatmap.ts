// Ranks: a rank x metric heatmap drawn on a canvas, rows virtualised (thousands of ranks scroll
// smoothly), grouped by host or sorted by any column. Cells the engine found abnormal (slow or
// outlier rank, abnormal phase, abnormal GPU utilization) are outlined in red. A rank that a
// finding names is listed and badged even when no per-rank rule flags it: an extra-work finding
// (a function only one rank runs, whose cost no peer waits for) names a rank whose step and
// local time are ordinary, and the page must not say "no abnormal rank" under such a finding.
import { ABNORMAL, clear, h, heatColor, sizeCanvas } from '../dom';
import { fmtNs, fmtPct } from '../format';
import type { ClusterRank, FindingRow, Overview } from '../types';
import { needsCluster, registerView, type ViewContext } from './registry';

interface Column {
  key: string;
  label: string;
  unit: 'ns' | 'ratio';
  get(r: ClusterRank): number | null;
  abnormal(r: ClusterRank): boolean;
}

const ROW_H = 18;
let disposeResize: () => void = () => {};  // the current heatmap's window listener
const LABEL_W = 170;

function columns(o: Overview): Column[] {
  const c = o.cluster!;
  const phaseAbnormal = new Set(c.phases.map((p) => `${p.rank}/${p.side}/${p.phase}`));
  const utilAbnormal = new Set((c.gpu_utilization?.abnormal ?? []).map((a) => a.rank));
  const cols: Column[] = [
    { key: 'step_ns', label: 'step', unit: 'ns', get: (r) => r.step_ns, abnormal: (r) => r.slow },
    { key: 'local_ns', label: 'local time', unit: 'ns', get: (r) => r.local_ns, abnormal: (r) => r.outlier },
    { key: 'comm_wait_ns', label: 'comm wait', unit: 'ns', get: (r) => r.comm_wait_ns, abnormal: () => false },
    { key: 'late_sum_ns', label: 'lateness', unit: 'ns', get: (r) => r.late_sum_ns, abnormal: (r) => r.slow },
    { key: 'compute_ns', label: 'compute', unit: 'ns', get: (r) => r.compute_ns, abnormal: () => false },
  ];
  if (c.ranks.some((r) => r.gpu_utilization !== null)) {
    cols.push({ key: 'gpu_utilization', label: 'GPU util', unit: 'ratio', get: (r) => r.gpu_utilization, abnormal: (r) => utilAbnormal.has(r.rank) });
  }
  for (const side of ['cpu', 'gpu'] as const) {
    const field = side === 'cpu' ? 'cpu_phases_ns' : 'gpu_phases_ns';
    if (!c.ranks.some((r) => r[field])) continue;
    for (const phase of ['data_loading', 'forward', 'backward', 'optimizer', 'other']) {
      cols.push({
        key: `${side}:${phase}`,
        label: `${side === 'gpu' ? 'GPU ' : ''}${phase.replace('_', ' ')}`,
        unit: 'ns',
        get: (r) => r[field]?.[phase] ?? null,
        abnormal: (r) => phaseAbnormal.has(`${r.rank}/${side}/${phase}`),
      });
    }
  }
  return cols;
}

// The first (most costly) finding that names each rank: its position in the report and kind.
// A finding about every rank of the job (CPU contention, uneven timing) singles out none.
interface Naming {
  index: number;
  kind: string;
}
function namedRanks(findings: FindingRow[], rankCount: number): Map<number, Naming> {
  const out = new Map<number, Naming>();
  findings.forEach((f, i) => {
    const ranks = f.ranks ?? [];
    if (ranks.length >= rankCount) return;
    for (const r of ranks) if (!out.has(r)) out.set(r, { index: i + 1, kind: f.kind });
  });
  return out;
}

function namingLabel(n: Naming): string {
  return `finding ${n.index}: ${n.kind.replace(/_/g, ' ')}`;
}

function ranked(rows: ClusterRank[], sort: string, cols: Column[]): ClusterRank[] {
  const out = rows.slice();
  if (sort === 'host') out.sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : a.rank - b.rank));
  else if (sort === 'rank') out.sort((a, b) => a.rank - b.rank);
  else {
    const col = cols.find((c) => c.key === sort)!;
    out.sort((a, b) => (col.get(b) ?? -Infinity) - (col.get(a) ?? -Infinity) || a.rank - b.rank);
  }
  return out;
}

function detail(r: ClusterRank, cols: Column[], naming: Naming | undefined, ctx: ViewContext): HTMLElement {
  return h(
    'section',
    { id: 'rank-detail', 'data-rank': r.rank },
    h('h2', {}, `rank ${r.rank}`, h('span', { class: 'muted' }, ` on ${r.host}`),
      r.slow ? h('span', { class: 'badge abnormal' }, 'slow') : r.outlier ? h('span', { class: 'badge abnormal' }, 'outlier') : null,
      naming ? h('span', { class: 'badge abnormal named', 'data-finding': naming.index }, namingLabel(naming)) : null),
    h('p', {},
      h('button', { id: 'open-timeline', onclick: () => ctx.navigate('timeline', { rank: r.rank }) }, 'Open its timeline'), ' ',
      h('span', { class: 'muted' }, `last to arrive at ${r.last_arriver_votes} of ${r.collectives} collectives; late in ${r.late_steps} of ${r.arrival_steps} steps; wait imposed on the others ${fmtNs(r.imposed_wait_ns)}`),
    ),
    h('table', { class: 'table compact' },
      h('tbody', {}, cols.map((c) =>
        h('tr', { class: c.abnormal(r) ? 'abnormal' : '' }, h('th', {}, c.label), h('td', { class: 'num' }, c.unit === 'ratio' ? fmtPct(c.get(r)) : fmtNs(c.get(r))), h('td', {}, c.abnormal(r) ? 'abnormal' : '')),
      )),
    ),
  );
}

registerView({
  id: 'heatmap',
  title: 'Ranks',
  order: 10,
  available: needsCluster,
  render(el: HTMLElement, ctx: ViewContext) {
    const c = ctx.overview.cluster!;
    const cols = columns(ctx.overview);
    const named = namedRanks(ctx.overview.findings ?? [], c.ranks.length);
    const flagged = (r: ClusterRank) => r.slow || r.outlier || named.has(r.rank);
    let sort = 'host';
    let rows = ranked(c.ranks, sort, cols);
    let selected = ctx.params.rank ?? null;
    const ranges = cols.map((col) => {
      const v = c.ranks.map((r) => col.get(r)).filter((x): x is number => x !== null);
      return { min: Math.min(...v), max: Math.max(...v) };
    });

    const header = h('div', { class: 'heat-header' });
    const scroll = h('div', { class: 'heat-scroll' });
    const spacer = h('div', { class: 'heat-spacer' });
    const canvas = h('canvas', { id: 'heatmap-canvas' });
    const tip = h('div', { class: 'tooltip', hidden: true });
    const detailBox = h('div', {});
    scroll.append(canvas, spacer);
    el.append(
      h('p', { class: 'muted' }, `${c.ranks.length} ranks on ${c.hosts.length} host${c.hosts.length === 1 ? '' : 's'}; per ${c.unit}, medians over steps. Click a column to sort by it, a row to open the rank. Red: abnormal (engine).`),
      h('div', { class: 'controls' },
        h('button', { class: 'sort-host', onclick: () => setSort('host') }, 'group by host'),
        h('button', { class: 'sort-rank', onclick: () => setSort('rank') }, 'by rank'),
        abnormalLinks()),
      header, scroll, tip, detailBox,
    );

    function abnormalLinks(): HTMLElement {
      // Ranks the findings name first, in the findings' order (worth most first), then the rest.
      const bad = c.ranks.filter(flagged).sort((a, b) => (named.get(a.rank)?.index ?? Infinity) - (named.get(b.rank)?.index ?? Infinity) || a.rank - b.rank);
      if (!bad.length) return h('span', { class: 'muted' }, 'no slow or outlier rank, and no finding names a rank');
      const label = (r: ClusterRank) => {
        const tags = [r.slow ? 'slow' : r.outlier ? 'outlier' : '', named.has(r.rank) ? namingLabel(named.get(r.rank)!) : ''].filter(Boolean);
        return `rank ${r.rank} (${tags.join('; ')}) `;
      };
      return h('span', { class: 'abnormal-ranks' }, 'Abnormal or named by a finding: ',
        bad.slice(0, 20).map((r) => h('a', { href: '#', class: 'rank-link', 'data-rank': r.rank, onclick: (e: Event) => {
          e.preventDefault();
          history.replaceState(null, '', location.hash.replace(/\?.*$/, '') + `?rank=${r.rank}`);
          select(r.rank, true);
        } }, label(r))),
        bad.length > 20 ? `and ${bad.length - 20} more` : '');
    }

    const width = () => Math.max(600, el.clientWidth - 4);
    const colW = () => Math.max(56, (width() - LABEL_W) / cols.length);

    function drawHeader() {
      clear(header);
      header.style.paddingLeft = `${LABEL_W}px`;
      for (const col of cols) {
        header.append(h('button', { class: `heat-col${sort === col.key ? ' sorted' : ''}`, style: `width:${colW()}px`, 'data-col': col.key, onclick: () => setSort(col.key) }, col.label));
      }
    }

    function draw() {
      const w = width();
      const viewH = Math.min(rows.length * ROW_H, Math.max(240, window.innerHeight * 0.6));
      scroll.style.height = `${viewH}px`;
      spacer.style.height = `${rows.length * ROW_H}px`;
      canvas.style.marginBottom = `${-viewH}px`;
      const g = sizeCanvas(canvas, w, viewH);
      const first = Math.floor(scroll.scrollTop / ROW_H);
      const offset = -(scroll.scrollTop % ROW_H);
      const cw = colW();
      g.clearRect(0, 0, w, viewH);
      g.font = '12px system-ui, sans-serif';
      g.textBaseline = 'middle';
      for (let i = first, y = offset; i < rows.length && y < viewH; i++, y += ROW_H) {
        const r = rows[i];
        const newHost = sort === 'host' && (i === 0 || rows[i - 1].host !== r.host);
        g.fillStyle = r.rank === selected ? '#fff3bf' : i % 2 ? '#fafafa' : '#ffffff';
        g.fillRect(0, y, LABEL_W, ROW_H);
        g.fillStyle = flagged(r) ? ABNORMAL : '#222';
        g.fillText(`rank ${r.rank}`, 6, y + ROW_H / 2);
        g.fillStyle = '#888';
        g.fillText(r.host.length > 14 ? `${r.host.slice(0, 13)}…` : r.host, 70, y + ROW_H / 2);
        cols.forEach((col, j) => {
          const v = col.get(r);
          const x = LABEL_W + j * cw;
          const { min, max } = ranges[j];
          g.fillStyle = v === null ? '#eeeeee' : heatColor(max > min ? (v - min) / (max - min) : 0.2);
          g.fillRect(x + 1, y + 1, cw - 2, ROW_H - 2);
          if (col.abnormal(r)) {
            g.strokeStyle = ABNORMAL;
            g.lineWidth = 2;
            g.strokeRect(x + 2, y + 2, cw - 4, ROW_H - 4);
          }
        });
        if (newHost && i > 0) {
          g.fillStyle = '#555';
          g.fillRect(0, y, w, 1);
        }
        if (r.rank === selected) {
          g.strokeStyle = '#f59f00';
          g.lineWidth = 2;
          g.strokeRect(1, y + 1, w - 2, ROW_H - 2);
        }
      }
    }

    function select(rank: number | null, scrollTo: boolean) {
      selected = rank;
      clear(detailBox);
      const r = c.ranks.find((x) => x.rank === rank);
      if (r) {
        detailBox.append(detail(r, cols, named.get(r.rank), ctx));
        if (scrollTo) {
          const i = rows.indexOf(r);
          scroll.scrollTop = Math.max(0, i * ROW_H - scroll.clientHeight / 2);
        }
      }
      draw();
    }

    function setSort(key: string) {
      sort = key;
      rows = ranked(c.ranks, sort, cols);
      drawHeader();
      draw();
    }

    function cellAt(ev: MouseEvent): { row: ClusterRank; col: Column | null } | null {
      const rect = canvas.getBoundingClientRect();
      const x = ev.clientX - rect.left;
      const y = ev.clientY - rect.top + scroll.scrollTop;
      const row = rows[Math.floor(y / ROW_H)];
      if (!row) return null;
      const j = Math.floor((x - LABEL_W) / colW());
      return { row, col: x >= LABEL_W ? cols[j] ?? null : null };
    }

    scroll.addEventListener('scroll', () => draw());
    canvas.addEventListener('click', (ev) => {
      const cell = cellAt(ev);
      if (cell) {
        history.replaceState(null, '', location.hash.replace(/\?.*$/, '') + `?rank=${cell.row.rank}`);
        select(cell.row.rank, false);
      }
    });
    canvas.addEventListener('mousemove', (ev) => {
      const cell = cellAt(ev);
      if (!cell) {
        tip.hidden = true;
        return;
      }
      const { row, col } = cell;
      const value = col ? (col.unit === 'ratio' ? fmtPct(col.get(row)) : fmtNs(col.get(row))) : '';
      tip.textContent = `rank ${row.rank} (${row.host})${col ? ` · ${col.label}: ${value}${col.abnormal(row) ? ' · abnormal' : ''}` : ''}`;
      tip.hidden = false;
      tip.style.left = `${ev.pageX + 12}px`;
      tip.style.top = `${ev.pageY + 12}px`;
    });
    canvas.addEventListener('mouseleave', () => (tip.hidden = true));
    window.addEventListener('resize', onResize);
    function onResize() {
      drawHeader();
      draw();
    }
    disposeResize = () => window.removeEventListener('resize', onResize);

    drawHeader();
    select(selected, true);
  },
  dispose() {
    disposeResize();
    disposeResize = () => {};
  },
});
