// The page: a job list (served, several jobs), else one job with a tab per registered view.
// The route lives in the URL's hash: #/job/<id>/<view>?rank=R&step=S.
import { DataError, type DataSource, type JobInfo } from './data';
import { clear, errorBox, h } from './dom';
import { fmtCount } from './format';
import type { Overview } from './types';
import { allViews, findView, type View, type ViewParams } from './views/registry';

interface Route {
  job: string | null;
  view: string;
  params: ViewParams;
}

function parseRoute(): Route {
  const m = /^#\/job\/([^/?]+)(?:\/([a-z_-]+))?(?:\?(.*))?$/.exec(location.hash);
  if (!m) return { job: null, view: 'overview', params: {} };
  const q = new URLSearchParams(m[3] ?? '');
  const num = (k: string) => (q.has(k) && q.get(k) !== '' && Number.isFinite(Number(q.get(k))) ? Number(q.get(k)) : null);
  return { job: decodeURIComponent(m[1]), view: m[2] ?? 'overview', params: { rank: num('rank'), step: num('step') } };
}

function routeHash(job: string, view: string, params: ViewParams = {}): string {
  const q = new URLSearchParams();
  if (params.rank !== null && params.rank !== undefined) q.set('rank', String(params.rank));
  if (params.step !== null && params.step !== undefined) q.set('step', String(params.step));
  const qs = q.toString();
  return `#/job/${encodeURIComponent(job)}/${view}${qs ? `?${qs}` : ''}`;
}

export class App {
  private overviews = new Map<string, Promise<Overview>>();
  private current: View | null = null;
  private jobs: JobInfo[] = [];

  constructor(private readonly root: HTMLElement, private readonly source: DataSource) {}

  async start(): Promise<void> {
    window.addEventListener('hashchange', () => void this.show());
    try {
      const list = await this.source.jobs();
      this.jobs = list.jobs;
      if (!parseRoute().job && list.jobs.length === 1) {
        const only = list.jobs[0];  // a comparison opens on what changed
        history.replaceState(null, '', routeHash(only.id, only.kind === 'comparison' ? 'compare' : 'overview'));
      }
      await this.show(list.warnings);
    } catch (e) {
      clear(this.root).append(this.header(null), errorBox(e instanceof Error ? e.message : String(e)));
    }
  }

  private header(job: JobInfo | null): HTMLElement {
    const report = job ? this.source.reportUrl(job.id) : null;
    return h(
      'header',
      {},
      h('a', { class: 'brand', href: this.source.embedded ? null : '#' }, 'rankscope'),
      job ? h('span', { class: 'job-name', title: job.path }, job.name) : null,
      !this.source.embedded && this.jobs.length > 1 ? h('a', { href: '#', class: 'all-jobs' }, `all jobs (${this.jobs.length})`) : null,
      report ? h('a', { href: report, class: 'download', download: 'report.json' }, 'report JSON') : null,
      this.source.embedded ? h('span', { class: 'offline' }, 'HTML report · offline') : null,
    );
  }

  private jobList(warnings: string[]): HTMLElement {
    const rows = this.jobs.map((j) =>
      h(
        'tr',
        {},
        h('td', {}, h('a', { href: routeHash(j.id, j.kind === 'comparison' ? 'compare' : 'overview'), class: 'job-link' }, j.name)),
        h('td', {}, j.kind),
        h('td', { class: 'num' }, fmtCount(j.files)),
        h('td', {}, j.modified_unix_s ? new Date(j.modified_unix_s * 1000).toLocaleString() : ''),
        h('td', { class: 'path' }, j.path),
      ),
    );
    return h(
      'section',
      { class: 'jobs' },
      h('h1', {}, 'Jobs'),
      warnings.length ? h('ul', { class: 'warnings' }, warnings.map((w) => h('li', {}, w))) : null,
      this.jobs.length === 0
        ? h('p', { class: 'empty' }, 'No trace, capture or report was found under the served paths yet.')
        : h('table', { class: 'table' }, h('thead', {}, h('tr', {}, h('th', {}, 'job'), h('th', {}, 'kind'), h('th', {}, 'files'), h('th', {}, 'modified'), h('th', {}, 'path'))), h('tbody', {}, rows)),
    );
  }

  private overview(job: string): Promise<Overview> {
    let p = this.overviews.get(job);
    if (!p) {
      p = this.source.doc<Overview>(job, 'overview');
      p.catch(() => this.overviews.delete(job));  // a failed analysis may succeed later (traces arriving)
      this.overviews.set(job, p);
    }
    return p;
  }

  private async show(warnings: string[] = []): Promise<void> {
    const route = parseRoute();
    this.current?.dispose?.();
    this.current = null;
    if (!route.job) {
      if (!this.source.embedded) {
        try {
          const list = await this.source.jobs();
          this.jobs = list.jobs;
          warnings = list.warnings;
        } catch (e) {
          clear(this.root).append(this.header(null), errorBox(e instanceof Error ? e.message : String(e)));
          return;
        }
      }
      clear(this.root).append(this.header(null), this.jobList(warnings));
      return;
    }
    const job = this.jobs.find((j) => j.id === route.job) ?? null;
    const main = h('main', { id: 'view' }, h('p', { class: 'loading' }, 'Analysing the job…'));
    const nav = h('nav', { class: 'tabs' });
    clear(this.root).append(this.header(job), nav, main);
    let overview: Overview;
    try {
      overview = await this.overview(route.job);
    } catch (e) {
      const msg = e instanceof DataError ? e.message : String(e);
      clear(main).append(errorBox(`This job could not be analysed: ${msg}`));
      return;
    }
    if (parseRoute().job !== route.job || parseRoute().view !== route.view) return;  // moved on meanwhile
    const view = findView(route.view) ?? findView('overview')!;
    for (const v of allViews()) {
      const ok = v.available(overview);
      nav.append(
        h(
          'a',
          {
            href: routeHash(route.job, v.id, v.id === 'timeline' || v.id === 'heatmap' ? route.params : {}),
            class: `tab${v.id === view.id ? ' active' : ''}${ok === true ? '' : ' unavailable'}`,
            title: ok === true ? null : ok,
            'data-view': v.id,
          },
          v.title,
        ),
      );
    }
    const ok = view.available(overview);
    clear(main).setAttribute('data-view', view.id);
    if (ok !== true) {
      main.append(h('p', { class: 'unavailable-note' }, `${view.title}: ${ok}.`));
      return;
    }
    this.current = view;
    const jobId = route.job;
    try {
      await view.render(main, {
        source: this.source,
        jobId,
        overview,
        params: route.params,
        navigate: (id, params = {}) => {
          location.hash = routeHash(jobId, id, params);
        },
      });
    } catch (e) {
      main.append(errorBox(e instanceof Error ? e.message : String(e)));
    }
  }
}
