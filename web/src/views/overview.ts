// Job overview: what is wrong and what fixing it is worth (findings with their cost and
// evidence, the what-if), files that could not be read, and the step time of every step and rank.
import { Charts } from '../charts';
import { ABNORMAL, h } from '../dom';
import { fmtNs, fmtPct } from '../format';
import type { FindingRow, Overview, Sentence, TelemetryFindingRow } from '../types';
import { registerView, type ViewContext } from './registry';

const charts = new Charts();

function sentence(s: Sentence | null | undefined): string {
  if (s === null || s === undefined) return '';
  if (typeof s === 'string') return s;
  if (typeof s.text === 'string') return s.text;
  if (typeof s.sentence === 'string') return s.sentence;
  // Evidence given as data only (hang findings): its kind, subject and ranks.
  const parts = [String(s.kind ?? '').replace(/_/g, ' '), s.subject ? String(s.subject) : '', Array.isArray(s.ranks) && s.ranks.length ? `ranks ${s.ranks.join(',')}` : s.rank !== undefined ? `rank ${String(s.rank)}` : ''];
  return parts.filter((x) => x).join(': ');
}

function sentences(v: Sentence | Sentence[] | null | undefined): string[] {
  if (v === null || v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).map(sentence).filter((x) => x !== '');
}

// A comparison JSON: the job is the comparison (no traces here).
function isComparison(o: Overview): boolean {
  return o.comparison?.source === 'comparison';
}

// Where a rank of a finding opens.
function rankView(o: Overview): string {
  return o.hang ? 'hang' : isComparison(o) ? 'compare' : 'heatmap';
}

function rankLinks(ranks: number[], ctx: ViewContext): HTMLElement {
  return h(
    'span',
    { class: 'rank-links' },
    ranks.slice(0, 16).map((r) =>
      h('span', { class: 'rank-chip' },
        h('a', { href: '#', class: 'rank-link', 'data-rank': r, onclick: (e: Event) => { e.preventDefault(); ctx.navigate(rankView(ctx.overview), { rank: r }); } }, `rank ${r}`),
        ctx.overview.hang || isComparison(ctx.overview) ? null : h('a', { href: '#', class: 'timeline-link', title: `timeline of rank ${r}`, 'data-rank': r, onclick: (e: Event) => { e.preventDefault(); ctx.navigate('timeline', { rank: r }); } }, '⟿'),
      ),
    ),
    ranks.length > 16 ? h('span', {}, ` and ${ranks.length - 16} more`) : null,
  );
}

// What fixing the finding is worth, from the engine's numbers.
function costLine(f: FindingRow): HTMLElement | null {
  const c = f.cost;
  if (c) {
    if (c.saving_ns > 0) {
      return h('p', { class: 'cost' }, h('strong', {}, `worth ${fmtNs(c.saving_ns)} per ${c.unit}`),
        ` (${fmtPct(c.share)} of the ${c.unit}): ${fmtNs(c.step_ns)} now → ${fmtNs(c.estimated_step_ns)} once fixed`);
    }
    if (c.method === 'added_work' && c.added_ns > 0) return h('p', { class: 'cost' }, h('strong', {}, `adds ${fmtNs(c.added_ns)} per ${c.unit}`), ' on these ranks, which no peer measurably waits for');
    if (c.method === 'window_share') return h('p', { class: 'cost' }, h('strong', {}, `during ${fmtPct(c.window_share)} of the window`));
    return f.cost_text ? h('p', { class: 'cost' }, f.cost_text) : null;
  }
  if (f.cost_ns !== undefined && f.cost_ns > 0) {  // report/1
    return h('p', { class: 'cost' }, h('strong', {}, `worth ${fmtNs(f.cost_ns)} per step`), ` (${fmtPct(f.cost_share ?? null)} of the step): `,
      `${fmtNs(f.step_ns)} now → ${fmtNs(f.estimated_step_ns)} once fixed`);
  }
  return null;
}

function findingCard(f: FindingRow, ctx: ViewContext, i: number): HTMLElement {
  const ranks = f.ranks ?? [];
  const hosts = f.hosts ?? (f.host ? [f.host] : []);
  return h(
    'article',
    { class: `finding kind-${f.kind}${f.severity ? ` severity-${f.severity}` : ''}`, 'data-kind': f.kind, 'data-index': i },
    h('div', { class: 'finding-head' },
      h('span', { class: 'badge' }, f.kind.replace(/_/g, ' ')),
      f.severity ? h('span', { class: `badge severity ${f.severity}` }, f.severity) : null,
      h('h3', { class: 'finding-title' }, f.title ?? f.sentence ?? f.kind),
    ),
    costLine(f),
    ranks.length ? h('p', { class: 'who' }, 'Ranks: ', rankLinks(ranks, ctx), hosts.length ? `  on ${hosts.join(', ')}` : '') : null,
    (f.evidence ?? []).length ? h('ul', { class: 'evidence' }, sentences(f.evidence).map((s) => h('li', {}, s))) : null,
    sentences(f.next).length ? h('p', { class: 'next' }, h('strong', {}, 'Next: '), sentences(f.next).join(' ')) : null,
  );
}

function telemetryCard(f: TelemetryFindingRow): HTMLElement {
  return h(
    'article',
    { class: 'finding telemetry-finding', 'data-kind': f.kind },
    h('div', { class: 'finding-head' }, h('span', { class: 'badge' }, f.kind.replace(/_/g, ' ')), h('h3', {}, `${f.host}: ${f.summary}`)),
    h('ul', { class: 'evidence' }, sentences(f.evidence as Sentence[]).map((s) => h('li', {}, s))),
    f.next ? h('p', { class: 'next' }, h('strong', {}, 'Next: '), sentence(f.next)) : null,
  );
}

function errorsSection(o: Overview): HTMLElement | null {
  if (!o.errors.length) return null;
  return h(
    'section',
    { class: 'file-errors', role: 'alert' },
    h('h2', {}, `${o.errors.length} file${o.errors.length === 1 ? '' : 's'} could not be read`),
    h('ul', {}, o.errors.slice(0, 200).map((e) => h('li', {}, h('code', {}, e.path), ': ', e.error))),
    o.errors.length > 200 ? h('p', {}, `… and ${o.errors.length - 200} more`) : null,
  );
}

function summary(o: Overview): HTMLElement {
  const c = o.cluster;
  const item = (label: string, value: string) => h('div', { class: 'stat' }, h('div', { class: 'stat-value' }, value), h('div', { class: 'stat-label' }, label));
  return h(
    'div',
    { class: 'stats' },
    item('ranks analysed', String(o.job.ranks_analysed)),
    c ? item('hosts', String(c.hosts.length)) : null,
    o.hang ? item('stalled', o.hang.stalled ? `yes, ${o.hang.stalled_for_s?.toFixed(1) ?? '?'} s` : 'no') : null,
    o.hang ? item('snapshot', o.hang.capture || '–') : null,
    item('backend', o.job.backend || '–'),
    c ? item(`time per ${c.unit}`, fmtNs(c.step_ns)) : null,
    c ? item('matched collectives', String(c.collectives.matched)) : null,
    c ? item('median arrival skew', fmtNs(c.collectives.median_skew_ns)) : null,
    o.analysis_s !== undefined ? item('analysis', `${o.analysis_s.toFixed(2)} s`) : null,
  );
}

function saved(w: { step_ns: number; estimated_step_ns: number; saving_ns: number }): string {
  return `${fmtNs(w.step_ns)} → ${fmtNs(w.estimated_step_ns)} per step, ${fmtNs(w.saving_ns)} (${fmtPct(w.step_ns > 0 ? w.saving_ns / w.step_ns : null)}) saved.`;
}

function whatIf(o: Overview, ctx: ViewContext): HTMLElement | null {
  const w = o.cluster?.what_if;
  if (!w) return null;
  const slow = w.ranks.length
    ? h('p', { class: 'what-if' }, h('strong', {}, 'What if '), rankLinks(w.ranks, ctx), h('strong', {}, ' ran like the median rank: '), saved(w))
    : h('p', { class: 'what-if' }, 'No rank is slow: every rank is within the robust range of its peers.');
  // Each finding's cost leaves the others in place; what fixing them together saves.
  const all = o.cluster?.what_if_findings;
  if (!all) return slow;
  return h(
    'div',
    {},
    slow,
    h('p', { class: 'what-if what-if-findings' },
      h('strong', {}, `What if the ${all.findings} findings about `), rankLinks(all.ranks, ctx),
      h('strong', {}, ' were fixed together: '), saved(all)),
  );
}

function stepChart(el: HTMLElement, o: Overview, ctx: ViewContext): void {
  const slow = new Set((o.cluster?.ranks ?? []).filter((r) => r.slow).map((r) => r.rank));
  const normal: [number, number, number][] = [];
  const abnormal: [number, number, number][] = [];
  for (const r of o.ranks) {
    for (const s of r.steps) (slow.has(r.rank) ? abnormal : normal).push([s.number, s.duration_ns / 1e6, r.rank]);
  }
  if (!normal.length && !abnormal.length) {
    el.append(h('p', { class: 'muted' }, 'No profiler steps in the window: step times need ProfilerStep annotations.'));
    return;
  }
  const box = h('div', { class: 'chart', id: 'step-chart' });
  el.append(h('h2', {}, 'Step time per step and rank'), box);
  const chart = charts.add(box, {
    grid: { left: 60, right: 20, top: 30, bottom: 40 },
    legend: { top: 0 },
    tooltip: { trigger: 'item', formatter: (p: { value: [number, number, number] }) => `rank ${p.value[2]}, step ${p.value[0]}: ${p.value[1].toFixed(2)} ms` },
    xAxis: { type: 'value', name: 'step', minInterval: 1, scale: true, nameLocation: 'middle', nameGap: 25 },
    yAxis: { type: 'value', name: 'ms', scale: true },
    series: [
      { name: 'ranks', type: 'scatter', symbolSize: 6, data: normal, itemStyle: { color: '#1f77b4', opacity: 0.6 }, large: normal.length > 5000 },
      { name: 'slow ranks', type: 'scatter', symbolSize: 9, data: abnormal, itemStyle: { color: ABNORMAL } },
    ],
  });
  chart.on('click', (p) => {
    const v = (p as unknown as { value: [number, number, number] }).value;
    ctx.navigate('timeline', { rank: v[2], step: v[0] });
  });
}

registerView({
  id: 'overview',
  title: 'Overview',
  order: 0,
  available: () => true,
  render(el: HTMLElement, ctx: ViewContext) {
    const o = ctx.overview;
    el.append(summary(o));
    const errs = errorsSection(o);
    if (errs) el.append(errs);
    if (o.warnings.length) {
      el.append(h('details', { class: 'warnings' }, h('summary', {}, `${o.warnings.length} warning${o.warnings.length === 1 ? '' : 's'}`), h('ul', {}, o.warnings.map((w) => h('li', {}, w)))));
    }
    if (o.hang) {  // a stack snapshot: its hang findings; the Hang tab has the stacks
      el.append(h('h2', {}, 'Findings'));
      el.append(o.findings.length ? h('div', { class: 'findings' }, o.findings.map((f, i) => findingCard(f, ctx, i)))
        : h('p', { class: 'muted no-findings' }, 'Nothing stands out: no rank is stuck apart from the others.'));
      el.append(h('p', {}, h('a', { href: '#', class: 'open-hang', onclick: (e: Event) => { e.preventDefault(); ctx.navigate('hang'); } }, 'What each rank was doing →')));
      return;
    }
    const openCompare = o.comparison
      ? h('p', {}, h('a', { href: '#', class: 'open-compare', onclick: (e: Event) => { e.preventDefault(); ctx.navigate('compare'); } },
        o.comparison.source === 'baseline' ? 'What changed since the job\'s baseline →' : 'What changed, and what it costs →'))
      : null;
    if (isComparison(o)) {  // a run comparison: its findings; the Compare tab has the rest
      el.append(h('h2', {}, 'Findings'));
      el.append(o.findings.length ? h('div', { class: 'findings' }, o.findings.map((f, i) => findingCard(f, ctx, i)))
        : h('p', { class: 'muted no-findings' }, 'No difference beyond noise between the two runs.'));
      el.append(openCompare!);
      return;
    }
    if (!o.ranks.length) return;
    if (openCompare) el.append(openCompare);
    const wi = whatIf(o, ctx);
    if (wi) el.append(wi);
    el.append(h('h2', {}, 'Findings'));
    if (o.findings.length) el.append(h('div', { class: 'findings' }, o.findings.map((f, i) => findingCard(f, ctx, i))));
    else el.append(h('p', { class: 'muted no-findings' }, o.cluster ? 'Nothing stands out: no rank, node or function is abnormal enough to be worth fixing.' : 'One rank: findings compare ranks with their peers.'));
    if (o.telemetry?.findings?.length) {
      el.append(h('h2', {}, 'Node telemetry'), h('div', { class: 'findings' }, o.telemetry.findings.map(telemetryCard)));
    }
    stepChart(el, o, ctx);
  },
  dispose: () => charts.disposeAll(),
});

