// Hang: what every rank of a stack snapshot was doing (`rankscope hang`, docs/hang.md) — each
// thread role's groups of identical stacks, the majority and the odd ones out; per process group
// the first collective still open, who entered it, who never did; and each rank's state.
import { ABNORMAL, h } from '../dom';
import type { HangCall, HangFrame, HangReport } from '../types';
import { registerView, type ViewContext } from './registry';

function call(c: HangCall | null | undefined): string {
  if (!c) return '–';
  return `${c.op} ${c.sizes.map((s) => `[${s.join(',')}]`).join('')} ${c.dtypes.join(',')}`.trim();
}

function frames(fs: HangFrame[]): HTMLElement {
  return h('ol', { class: 'frames' }, fs.map((f) =>
    h('li', { class: f.native ? 'native' : '' }, h('code', {}, `${f.file}:${f.line}`), ` ${f.function}`, f.code ? h('span', { class: 'muted' }, `  ${f.code}`) : null)));
}

function ranksLine(ranks: number[], selected: number | null): HTMLElement {
  return h('span', {}, ranks.map((r, i) => [i ? ', ' : '', r === selected ? h('mark', {}, String(r)) : String(r)]).flat());
}

registerView({
  id: 'hang',
  title: 'Hang',
  order: 70,
  available: (o) => (o.hang ? true : 'a stack snapshot shows what each rank was doing (rankscope snapshot; the daemon takes one when a job hangs)'),
  async render(el: HTMLElement, ctx: ViewContext) {
    const r: HangReport = ctx.overview.hang ?? (await ctx.source.doc<HangReport>(ctx.jobId, 'hang'));
    const sel = ctx.params.rank ?? null;
    el.append(h('p', { id: 'hang-summary' },
      `Job ${r.job || '–'}, snapshot ${r.capture || '–'}: ${r.ranks.length} ranks`, r.world_size ? ` of ${r.world_size}` : '', '. ',
      r.stalled ? h('strong', { class: 'late' }, `Stalled for up to ${r.stalled_for_s?.toFixed(1) ?? '?'} s.`) : 'Not stalled: the ranks were stepping.'));
    if (r.warnings.length || r.problems.length) {
      el.append(h('ul', { class: 'warnings' }, r.warnings.map((w) => h('li', {}, w)), r.problems.map((p) => h('li', {}, h('code', {}, p.path), `: ${p.message}`))));
    }

    el.append(h('h2', {}, 'Collectives (Flight Recorder)'));
    for (const g of r.process_groups) {
      const fo = g.first_open;
      el.append(h('section', { class: 'pg', 'data-group': g.name },
        h('h3', {}, `process group ${g.name}${g.desc ? ` (${g.desc})` : ''}: ranks ${g.members.join(', ')}`),
        fo
          ? h('p', { class: 'first-open' }, `first open: seq ${fo.seq} ${call(fo.call)}; `,
              fo.entered.length ? ['waiting: ', ranksLine(fo.entered, sel), '; '] : '',
              fo.missing.length ? h('span', { class: 'missing', style: `color:${ABNORMAL}` }, 'never entered: ', ranksLine(fo.missing, sel), '; ') : '',
              fo.unknown.length ? ['no dump: ', ranksLine(fo.unknown, sel), '; '] : '',
              fo.pending_s !== null ? `open ${fo.pending_s.toFixed(1)} s` : '')
          : h('p', { class: 'muted' }, 'no open collective'),
        g.mismatches.length ? h('p', { class: 'mismatch', style: `color:${ABNORMAL}` }, `${g.mismatches.length} mismatch${g.mismatches.length === 1 ? '' : 'es'} (the first at seq ${g.mismatches[0].seq}, ${g.mismatches[0].field})`) : null,
        h('table', { class: 'table compact' },
          h('thead', {}, h('tr', {}, h('th', {}, 'rank'), h('th', {}, 'last completed'), h('th', {}, 'last entered'), h('th', {}, 'open call'), h('th', {}, 'open for'))),
          h('tbody', {}, g.members_state.map((m) => h('tr', { class: fo?.missing.includes(m.rank) ? 'abnormal' : '' },
            h('td', {}, String(m.rank)), h('td', { class: 'num' }, m.last_completed ?? '–'), h('td', { class: 'num' }, m.last_entered ?? '–'),
            h('td', {}, call(m.pending_call)), h('td', { class: 'num' }, m.pending_s !== null && m.pending_s !== undefined ? `${m.pending_s.toFixed(1)} s` : '–'))))),
      ));
    }

    el.append(h('h2', {}, 'What each rank was doing'));
    for (const role of r.thread_roles) {
      el.append(h('section', { class: 'role', 'data-role': role.role },
        h('h3', {}, `${role.role} thread${role.has_majority ? '' : ' (no majority)'}`),
        role.groups.map((g) => h('div', { class: `stack-group${g.majority ? ' majority' : ' odd'}`, 'data-ranks': g.rank_ranges },
          h('p', {}, h('strong', {}, `ranks ${g.rank_ranges}`), ` (${g.ranks.length} of ${role.ranks.length}${g.majority ? ', majority' : ''})`),
          frames(g.frames.slice(-12))))));
    }

    el.append(h('h2', {}, 'Ranks'));
    el.append(h('table', { class: 'table compact', id: 'hang-ranks' },
      h('thead', {}, h('tr', {}, h('th', {}, 'rank'), h('th', {}, 'host'), h('th', {}, 'pid'), h('th', {}, 'stack taken by'), h('th', {}, 'steps'), h('th', {}, 'since last step'), h('th', {}, 'stalled'))),
      h('tbody', {}, r.ranks.map((x) => h('tr', { class: x.rank === sel ? 'selected' : '' },
        h('td', {}, String(x.rank)), h('td', {}, x.host), h('td', {}, String(x.pid)), h('td', {}, x.how || x.stack_taken_by),
        h('td', { class: 'num' }, x.steps_completed ?? '–'),
        h('td', { class: 'num' }, x.seconds_since_last_step !== null ? `${x.seconds_since_last_step.toFixed(1)} s` : '–'),
        h('td', {}, x.stalled ? 'yes' : 'no'))))));
  },
});
