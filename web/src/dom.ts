// A small element builder: h('div', {class: 'x'}, 'text', child).
type Attrs = Record<string, string | number | boolean | null | undefined | ((e: Event) => void)>;
type Child = Node | string | number | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: (Child | Child[])[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.replace(/^on/, ''), v as EventListener);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

export function clear(el: HTMLElement): HTMLElement {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

// A canvas sized for the device's pixel ratio; draw in CSS pixels.
export function sizeCanvas(canvas: HTMLCanvasElement, width: number, height: number): CanvasRenderingContext2D {
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.max(1, Math.round(width * dpr));
  canvas.height = Math.max(1, Math.round(height * dpr));
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  const ctx = canvas.getContext('2d')!;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return ctx;
}

export function errorBox(message: string): HTMLElement {
  return h('div', { class: 'error', role: 'alert' }, message);
}

// Blue ramp for heat cells: t in [0, 1].
export function heatColor(t: number): string {
  const x = Math.max(0, Math.min(1, t));
  const r = Math.round(239 - x * (239 - 8));
  const g = Math.round(243 - x * (243 - 81));
  const b = Math.round(255 - x * (255 - 156));
  return `rgb(${r},${g},${b})`;
}

export const ABNORMAL = '#d62728';
export const PHASE_COLORS: Record<string, string> = {
  data_loading: '#9467bd',
  forward: '#1f77b4',
  backward: '#ff7f0e',
  optimizer: '#2ca02c',
  other: '#b0b0b0',
  comm_wait: '#d62728',
};
export const OP_COLORS = ['#e377c2', '#17becf', '#bcbd22', '#8c564b', '#7f7f7f', '#9467bd', '#ff9896', '#98df8a'];
