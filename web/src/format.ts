// Number formatting for display only (the numbers are the engine's).

export function fmtNs(ns: number | null | undefined): string {
  if (ns === null || ns === undefined || !Number.isFinite(ns)) return '–';
  const a = Math.abs(ns);
  if (a >= 1e9) return `${(ns / 1e9).toFixed(a >= 1e10 ? 1 : 2)} s`;
  if (a >= 1e6) return `${(ns / 1e6).toFixed(a >= 1e8 ? 0 : a >= 1e7 ? 1 : 2)} ms`;
  if (a >= 1e3) return `${(ns / 1e3).toFixed(a >= 1e5 ? 0 : 1)} µs`;
  return `${Math.round(ns)} ns`;
}

export function fmtMs(ns: number): string {
  return (ns / 1e6).toFixed(Math.abs(ns) >= 1e8 ? 0 : 1);
}

export function fmtBytes(b: number | null | undefined): string {
  if (b === null || b === undefined || !Number.isFinite(b)) return '–';
  const units = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
  let v = b;
  let i = 0;
  while (Math.abs(v) >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${v.toFixed(i === 0 ? 0 : v >= 100 ? 0 : 1)} ${units[i]}`;
}

export function fmtPct(share: number | null | undefined, digits = 1): string {
  if (share === null || share === undefined || !Number.isFinite(share)) return '–';
  return `${(share * 100).toFixed(digits)} %`;
}

export function fmtCount(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '–';
  return Math.round(n).toLocaleString('en-US');
}

export function fmtValue(v: number | null | undefined, unit: string): string {
  switch (unit) {
    case 'ns':
      return fmtNs(v);
    case 'ratio':
      return fmtPct(v);
    case 'bytes':
      return fmtBytes(v);
    case 'bytes/s':
      return v === null || v === undefined ? '–' : `${fmtBytes(v)}/s`;
    case 'GB/s':
      return v === null || v === undefined ? '–' : `${v.toFixed(2)} GB/s`;
    default:
      return v === null || v === undefined ? '–' : `${+v.toFixed(3)} ${unit}`;
  }
}
