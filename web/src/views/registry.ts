// The view registry: every view of the page registers itself here (views/all.ts imports them),
// and the tabs are drawn from it. A new analysis (compare, hang) adds a view by registering one:
// an id, a title, when it applies, and how it renders from the job's documents.
import type { DataSource } from '../data';
import type { Overview } from '../types';

export interface ViewParams {
  rank?: number | null;
  step?: number | null;
}

export interface ViewContext {
  source: DataSource;
  jobId: string;
  overview: Overview;
  params: ViewParams;
  // Opens another view (or this one with other parameters).
  navigate(view: string, params?: ViewParams): void;
}

export interface View {
  id: string;
  title: string;
  order: number;
  // true, or why the view does not apply to this job (shown instead of the view).
  available(overview: Overview): true | string;
  render(el: HTMLElement, ctx: ViewContext): Promise<void> | void;
  // Called when another view replaces it (charts release their resources).
  dispose?(): void;
}

const views: View[] = [];

export function registerView(v: View): void {
  if (views.some((x) => x.id === v.id)) throw new Error(`view ${v.id} registered twice`);
  views.push(v);
  views.sort((a, b) => a.order - b.order);
}

export function allViews(): readonly View[] {
  return views;
}

export function findView(id: string): View | undefined {
  return views.find((v) => v.id === id);
}

export function needsCluster(o: Overview): true | string {
  if (o.hang) return 'a stack snapshot has no traces (its Hang tab shows what each rank was doing)';
  if (o.comparison?.source === 'comparison') return 'a run comparison has no traces here (its Compare tab shows what changed)';
  return o.cluster ? true : `this view compares ranks: the job has ${o.ranks.length} rank${o.ranks.length === 1 ? '' : 's'}`;
}
