// Compare: what changed between two runs and what it costs (`rankscope compare`, docs/compare.md).
// It draws the compare engine's own document (rankscope.compare/1) as it is: the step-time delta
// and its noise band, the ranked differences whose costs add up to the delta, and the breakdown
// tables (overall, kernel classes, communication, operators, modules). A job of several ranks
// lists its rank pairs first; a click shows that pair.
import { Charts } from '../charts';
import { ABNORMAL, h } from '../dom';
import { fmtCount, fmtNs, fmtPct } from '../format';
import type { CompareDifference, CompareRankPair, Comparison } from '../types';
import { registerView, type ViewContext } from './registry';

const charts = new Charts();
const IMPROVED = '#2ca02c';
const TOP = 15;

function signedNs(ns: number): string {
  return `${ns > 0 ? '+' : ''}${fmtNs(ns)}`;
}

function deltaClass(regression: boolean, improvement: boolean): string {
  return regression ? 'regression' : improvement ? 'improvement' : '';
}

function count(c: number | null | undefined): string {
  if (c === null || c === undefined) return '–';
  return Number.isInteger(c) ? fmtCount(c) : c.toFixed(1);
}

function table(id: string, head: string[], rows: HTMLElement[]): HTMLElement {
  return h('table', { class: 'table compact', id },
    h('thead', {}, h('tr', {}, head.map((x) => h('th', {}, x)))), h('tbody', {}, rows));
}

function num(text: string, cls = ''): HTMLElement {
  return h('td', { class: `num ${cls}`.trim() }, text);
}

// The rank pair shown: the one asked for (by NEW's rank), else the job's median-delta rank.
function pickPair(c: Comparison, rank: number | null | undefined): CompareRankPair {
  const detailed = c.ranks.filter((r) => r.detailed);
  return c.ranks.find((r) => r.new_rank === rank)
    ?? c.ranks.find((r) => r.new_rank === c.job.median_rank && r.detailed)
    ?? detailed[0] ?? c.ranks[0];
}

function stepSummary(c: Comparison, p: CompareRankPair): HTMLElement {
  const b = p.steps.base, n = p.steps.new;
  const pct = b.mean_ns ? p.delta_ns / b.mean_ns : null;
  const who = p.base_rank === p.new_rank ? `rank ${p.new_rank}` : `BASE rank ${p.base_rank} / NEW rank ${p.new_rank}`;
  return h('section', { id: 'compare-summary', 'data-delta-ns': p.delta_ns, 'data-noise-ns': p.noise_ns },
    c.baseline ? h('p', { class: 'baseline-note' }, c.baseline) : null,
    h('p', { class: 'inputs muted' }, `BASE ${c.base.inputs.join(', ')}  ·  NEW ${c.new.inputs.join(', ')}`),
    h('div', { class: 'stats' },
      h('div', { class: 'stat' }, h('div', { class: 'stat-value', id: 'compare-base-step' }, fmtNs(b.mean_ns)), h('div', { class: 'stat-label' }, `BASE step (${b.kept} steps, sd ${fmtNs(b.sd_ns)})`)),
      h('div', { class: 'stat' }, h('div', { class: 'stat-value', id: 'compare-new-step' }, fmtNs(n.mean_ns)), h('div', { class: 'stat-label' }, `NEW step (${n.kept} steps, sd ${fmtNs(n.sd_ns)})`)),
      h('div', { class: 'stat' },
        h('div', { class: `stat-value ${p.beyond_noise ? (p.delta_ns > 0 ? 'regression' : 'improvement') : ''}`, id: 'compare-delta' }, signedNs(p.delta_ns)),
        h('div', { class: 'stat-label' }, `delta (${pct === null ? '–' : `${pct > 0 ? '+' : ''}${fmtPct(pct)}`}), ${who}`)),
      h('div', { class: 'stat' }, h('div', { class: 'stat-value' }, fmtNs(p.noise_ns)), h('div', { class: 'stat-label' }, 'noise band')),
    ),
    h('p', { id: 'compare-verdict' }, p.beyond_noise
      ? `The step changed beyond noise: explained ${signedNs(p.explained_ns)}, unexplained ${signedNs(p.unexplained_ns)} (the differences within noise).`
      : 'No difference beyond noise: the delta is within the runs\' own step-to-step variation.'),
    p.observations.length ? h('ul', { class: 'observations' }, p.observations.map((o) => h('li', { 'data-kind': o.kind }, o.text))) : null,
  );
}

// Several rank pairs: which ranks changed; a click shows that pair.
function rankPairs(c: Comparison, shown: CompareRankPair, ctx: ViewContext): HTMLElement | null {
  if (c.ranks.length < 2) return null;
  const changed = new Set(c.job.changed_ranks);
  return h('section', {},
    h('h2', {}, 'Ranks'),
    h('p', { class: 'muted' }, `median rank ${c.job.median_rank ?? '–'}; slowest rank BASE ${c.job.base_slowest_rank ?? '–'}, NEW ${c.job.new_slowest_rank ?? '–'}; `,
      changed.size ? `changed beyond noise: ${[...changed].join(', ')}` : 'no rank changed beyond noise'),
    table('compare-ranks', ['rank', 'BASE step', 'NEW step', 'delta', 'noise band', 'changed', 'tables'], c.ranks.map((r) =>
      h('tr', { class: `${r === shown ? 'selected' : ''} ${changed.has(r.new_rank) ? 'abnormal' : ''}`.trim(), 'data-rank': r.new_rank },
        h('td', {}, h('a', { href: '#', class: 'rank-link', onclick: (e: Event) => { e.preventDefault(); ctx.navigate('compare', { rank: r.new_rank }); } }, String(r.new_rank))),
        num(fmtNs(r.steps.base.mean_ns)), num(fmtNs(r.steps.new.mean_ns)), num(signedNs(r.delta_ns)), num(fmtNs(r.noise_ns)),
        h('td', {}, changed.has(r.new_rank) ? 'yes' : 'no'), h('td', {}, r.detailed ? 'full' : 'breakdown')))));
}

function differenceChart(el: HTMLElement, diffs: CompareDifference[]): void {
  const top = diffs.slice(0, TOP).reverse();  // the largest on top
  const box = h('div', { class: 'chart', id: 'compare-chart', style: `height:${Math.max(160, 28 * top.length + 60)}px` });
  el.append(box);
  charts.add(box, {
    grid: { left: 320, right: 40, top: 20, bottom: 30 },
    tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' }, valueFormatter: (v: number) => `${v > 0 ? '+' : ''}${v.toFixed(3)} ms` },
    xAxis: { type: 'value', name: 'ms per step', axisLabel: { formatter: (v: number) => `${v}` } },
    yAxis: { type: 'category', data: top.map((d) => (d.text.length > 60 ? `${d.text.slice(0, 57)}…` : d.text)) },
    series: [{
      type: 'bar',
      data: top.map((d) => ({
        value: d.delta_ns / 1e6,
        itemStyle: { color: d.delta_ns > 0 ? ABNORMAL : IMPROVED, opacity: d.beyond_noise ? 1 : 0.35 },
      })),
    }],
  });
}

// The first rows of the differences; the rest as one row that adds them up (a click lists them).
const LISTED = 25;

function differencesTable(p: CompareRankPair, all = false): HTMLElement {
  const listed = all ? p.differences : p.differences.slice(0, LISTED);
  const rows = listed.map((d, i) => h('tr', { class: d.beyond_noise ? (d.delta_ns > 0 ? 'regression' : 'improvement') : 'within-noise', 'data-cause': d.cause, 'data-delta-ns': d.delta_ns },
    num(String(i + 1)), num(signedNs(d.delta_ns)), num(fmtPct(d.share_of_delta)),
    h('td', {}, d.cause.replace(/_/g, ' ')),
    h('td', { class: 'what' }, d.text, d.before || d.after ? h('div', { class: 'muted' }, `${d.before || '–'} → ${d.after || '–'}`) : null,
      d.parts.length > 1 ? h('div', { class: 'muted' }, d.parts.slice(0, 3).map((x) => `${x.where} ${signedNs(x.delta_ns)}`).join('; ')) : null),
    h('td', {}, d.phase || '–'), num(fmtNs(d.base_ns)), num(fmtNs(d.new_ns)),
    h('td', {}, d.beyond_noise ? 'beyond' : 'within')));
  const rest = p.differences.slice(listed.length);
  if (rest.length) {
    const sum = rest.reduce((a, d) => a + d.delta_ns, 0);
    const beyond = rest.filter((d) => d.beyond_noise).length;
    const more = h('tr', { class: 'more', 'data-delta-ns': sum }, num(''), num(signedNs(sum)), num(''), h('td', {}, ''),
      h('td', {}, `${rest.length} more difference${rest.length === 1 ? '' : 's'}, together (${beyond ? `${beyond} beyond noise` : 'each within noise'}) `,
        h('a', { href: '#', class: 'show-all', onclick: (e: Event) => { e.preventDefault(); more.closest('table')!.replaceWith(differencesTable(p, true)); } }, 'list them')),
      h('td', {}, ''), num(''), num(''), h('td', {}, ''));
    rows.push(more);
  }
  rows.push(h('tr', { class: 'variation' }, num(''), num(signedNs(p.variation_ns)), num(''), h('td', {}, ''),
    h('td', {}, 'differences past the report\'s list, and rounding'), h('td', {}, ''), num(''), num(''), h('td', {}, '')));
  rows.push(h('tr', { class: 'total' }, num('='), num(signedNs(p.delta_ns)), num(''), h('td', {}, ''),
    h('td', {}, h('strong', {}, 'the step-time delta')), h('td', {}, ''), num(fmtNs(p.steps.base.mean_ns)), num(fmtNs(p.steps.new.mean_ns)), h('td', {}, '')));
  return table('compare-differences', ['#', 'cost', 'of delta', 'cause', 'what changed', 'phase', 'BASE', 'NEW', 'noise'], rows);
}

function overallTable(p: CompareRankPair): HTMLElement {
  return table('compare-overall', ['', 'BASE', 'NEW', 'DIFF', 'BASE count', 'NEW count'], p.overall.map((r) =>
    h('tr', { class: `group-${r.group} ${deltaClass(r.regression, r.improvement)}`.trim(), 'data-key': r.key },
      h('td', {}, r.label), num(fmtNs(r.base_ns)), num(fmtNs(r.new_ns)), num(signedNs(r.delta_ns), 'diff'),
      num(count(r.base_count)), num(count(r.new_count)))));
}

function kernelClassTable(p: CompareRankPair): HTMLElement {
  return table('compare-kernel-classes', ['class', 'BASE', 'NEW', 'DIFF', 'BASE count', 'NEW count', 'BASE kernels', 'NEW kernels'],
    p.kernel_classes.map((k) => h('tr', { 'data-class': k.class },
      h('td', {}, k.label), num(fmtNs(k.base_ns)), num(fmtNs(k.new_ns)), num(signedNs(k.delta_ns), 'diff'),
      num(count(k.base_count)), num(count(k.new_count)), h('td', { class: 'kernel' }, k.base_top || '–'), h('td', { class: 'kernel' }, k.new_top || '–'))));
}

function commTable(p: CompareRankPair): HTMLElement {
  return table('compare-communication', ['collective', 'dtype', 'size', 'BASE count', 'NEW count', 'BASE time', 'NEW time', 'BASE exposed', 'NEW exposed', 'DIFF exposed'],
    p.communication.map((c) => h('tr', {},
      h('td', {}, c.op), h('td', {}, c.dtype || '–'), h('td', {}, c.size || '–'), num(count(c.base_count)), num(count(c.new_count)),
      num(fmtNs(c.base_ns)), num(fmtNs(c.new_ns)), num(fmtNs(c.base_exposed_ns)), num(fmtNs(c.new_exposed_ns)),
      num(signedNs(c.new_exposed_ns - c.base_exposed_ns), 'diff'))));
}

// The operators and modules whose wall time (the step time they cost) changed most.
function byDelta<T extends { delta_ns: number }>(rows: T[]): T[] {
  return [...rows].sort((a, b) => Math.abs(b.delta_ns) - Math.abs(a.delta_ns)).slice(0, TOP);
}

function operatorTable(p: CompareRankPair): HTMLElement {
  // The roots ([step], [thread] ...) hold the whole step: their change is the delta itself.
  const ops = p.operators.filter((o) => !o.name.startsWith('['));
  return table('compare-operators', ['operator', 'status', 'module', 'BASE calls', 'NEW calls', 'BASE wall', 'NEW wall', 'DIFF wall', 'BASE GPU', 'NEW GPU'],
    byDelta(ops).map((o) => h('tr', { 'data-status': o.status },
      h('td', {}, o.name), h('td', {}, o.status), h('td', { class: 'muted' }, o.module || '–'),
      num(count(o.base_count)), num(count(o.new_count)), num(fmtNs(o.base_attributed_ns)), num(fmtNs(o.new_attributed_ns)),
      num(signedNs(o.delta_ns), 'diff'), num(fmtNs(o.base_device_ns)), num(fmtNs(o.new_device_ns)))));
}

function moduleTable(p: CompareRankPair): HTMLElement {
  return table('compare-modules', ['module', 'status', 'BASE wall', 'NEW wall', 'DIFF', 'source'],
    byDelta(p.modules).map((m) => h('tr', { 'data-status': m.status },
      h('td', {}, m.path || m.name), h('td', {}, m.status), num(fmtNs(m.base_attributed_ns)), num(fmtNs(m.new_attributed_ns)),
      num(signedNs(m.delta_ns), 'diff'), h('td', { class: 'muted' }, m.source || '–'))));
}

registerView({
  id: 'compare',
  title: 'Compare',
  order: 80,
  available: (o) => (o.comparison ? true
    : 'no run comparison: `rankscope compare BASE NEW --json FILE` writes one to serve (or `--html FILE` to open), and the daemon compares an automatic capture with its job\'s baseline'),
  async render(el: HTMLElement, ctx: ViewContext) {
    const c = await ctx.source.doc<Comparison>(ctx.jobId, 'compare');
    if (!c.ranks.length) {
      el.append(h('p', {}, 'The comparison has no rank pair.'));
      return;
    }
    const p = pickPair(c, ctx.params.rank);
    el.append(stepSummary(c, p));
    const pairs = rankPairs(c, p, ctx);
    if (pairs) el.append(pairs);
    el.append(h('h2', {}, 'What changed, per step'), h('p', { class: 'muted' }, 'Ranked by cost; the costs add up to the step-time delta. Faded bars are within noise.'));
    differenceChart(el, p.differences);
    el.append(differencesTable(p));
    el.append(h('h2', {}, 'Overall breakdown, per step'), overallTable(p));
    if (p.kernel_classes.length) el.append(h('h2', {}, 'GPU kernels by class'), kernelClassTable(p));
    if (p.communication.length) el.append(h('h2', {}, 'Communication'), commTable(p));
    if (p.detailed && p.operators.length) el.append(h('h2', {}, `Operators that changed most (of ${fmtCount(p.operators.length)} rows)`), operatorTable(p));
    if (p.detailed && p.modules.length) el.append(h('h2', {}, 'Modules that changed most'), moduleTable(p));
    if (!p.detailed) el.append(h('p', { class: 'muted' }, 'Operator and module tables are built for the focus ranks (the median and the slowest; `--rank R` for another).'));
    const warnings = [...c.warnings, ...p.warnings];
    if (warnings.length) el.append(h('ul', { class: 'warnings' }, warnings.map((w) => h('li', {}, w))));
  },
  dispose() {
    charts.disposeAll();
  },
});
