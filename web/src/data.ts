// Where the page's JSON comes from: the server (`rankscope serve`) or the document itself (an
// HTML report written by `rankscope analyze --html`, which carries every view inline).
import type { Bundle } from './types';

export interface JobInfo {
  id: string;
  kind: string;
  name: string;
  root: string;
  path: string;
  files: number;
  modified_unix_s: number;
}

export interface JobList {
  roots: string[];
  jobs: JobInfo[];
  warnings: string[];
}

export type ViewDoc = 'overview' | 'timeline' | 'matrix' | 'functions' | 'telemetry' | 'report' | 'hang' | 'compare';

export interface DataSource {
  readonly embedded: boolean;
  jobs(): Promise<JobList>;
  // arg: the step of a timeline (null: the default step)
  doc<T>(job: string, view: ViewDoc, arg?: number | null): Promise<T>;
  reportUrl(job: string): string | null;
}

// An error the server (or the document) answered with, in words a person can act on.
export class DataError extends Error {
  constructor(message: string, readonly status: number) {
    super(message);
  }
}

const EMBEDDED_JOB = 'report';

class EmbeddedSource implements DataSource {
  readonly embedded = true;
  constructor(private readonly bundle: Bundle) {}

  async jobs(): Promise<JobList> {
    const o = this.bundle.overview;
    return {
      roots: [],
      jobs: [{ id: EMBEDDED_JOB, kind: this.bundle.comparison ? 'comparison' : 'report', name: this.bundle.comparison ? 'comparison' : `${o.job.ranks_analysed} ranks`, root: '', path: '', files: o.job.files, modified_unix_s: 0 }],
      warnings: [],
    };
  }

  async doc<T>(_job: string, view: ViewDoc, arg?: number | null): Promise<T> {
    const b = this.bundle;
    const missing = (what: string) => new DataError(`${what} is not in this report file`, 404);
    switch (view) {
      case 'overview':
        return b.overview as T;
      case 'timeline': {
        if (!b.timelines) throw missing('The timeline (it needs two or more ranks)');
        const step = arg ?? b.default_step;
        if (step === null || step === undefined) throw new DataError('no profiler step is present on every rank: the timeline needs steps', 404);
        const t = b.timelines[String(step)];
        if (!t) throw missing(`The timeline of step ${step} (an HTML report keeps the middle steps)`);
        return { ...t, steps: b.timeline_steps ?? t.steps } as T;
      }
      case 'matrix':
        if (!b.matrix) throw missing('The communication matrix (it needs two or more ranks)');
        return b.matrix as T;
      case 'functions':
        if (!b.functions) throw missing('The functions across ranks (it needs two or more ranks)');
        return b.functions as T;
      case 'telemetry':
        if (!b.telemetry) throw missing('Node telemetry');
        return b.telemetry as T;
      case 'compare':
        if (!b.comparison) throw missing('A run comparison (rankscope compare --html writes one)');
        return b.comparison as T;
      default:
        throw missing(view);
    }
  }

  reportUrl(): string | null {
    return null;
  }
}

class ServedSource implements DataSource {
  readonly embedded = false;
  constructor(private readonly token: string | null) {}

  private async get<T>(path: string): Promise<T> {
    const headers: Record<string, string> = {};
    if (this.token) headers['Authorization'] = `Bearer ${this.token}`;
    let res: Response;
    try {
      res = await fetch(path, { headers });
    } catch (e) {
      throw new DataError(`cannot reach the rankscope server (${String(e)}); is \`rankscope serve\` still running?`, 0);
    }
    const text = await res.text();
    let body: unknown = null;
    try {
      body = JSON.parse(text);
    } catch {
      throw new DataError(`the server answered ${res.status} with something that is not JSON`, res.status);
    }
    if (!res.ok) {
      const msg = (body as { error?: string })?.error ?? `HTTP ${res.status}`;
      throw new DataError(msg, res.status);
    }
    return body as T;
  }

  jobs(): Promise<JobList> {
    return this.get<JobList>('/api/jobs');
  }

  doc<T>(job: string, view: ViewDoc, arg?: number | null): Promise<T> {
    const q = view === 'timeline' && arg !== null && arg !== undefined ? `?step=${encodeURIComponent(String(arg))}` : '';
    return this.get<T>(`/api/jobs/${encodeURIComponent(job)}/${view}${q}`);
  }

  reportUrl(job: string): string | null {
    return this.token ? null : `/api/jobs/${encodeURIComponent(job)}/report`;
  }
}

// The token of a server bound beyond loopback: given once as #token=..., kept for the tab.
function takeToken(): string | null {
  const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (m) {
    const token = decodeURIComponent(m[1]);
    sessionStorage.setItem('rankscope-token', token);
    history.replaceState(null, '', location.pathname + location.search);
    return token;
  }
  return sessionStorage.getItem('rankscope-token');
}

export function createSource(): DataSource {
  const el = document.getElementById('rankscope-data');
  if (el && el.textContent) {
    return new EmbeddedSource(JSON.parse(el.textContent) as Bundle);
  }
  return new ServedSource(takeToken());
}

export const embeddedJobId = EMBEDDED_JOB;
