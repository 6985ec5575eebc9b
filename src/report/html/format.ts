/** Text formatting for the report (fixed en-US conventions: the page must not depend on the host locale). */

/** Built on first use, not at load: a `predict` without `--html` never formats (docs/performance.md). */
let integerFormat: Intl.NumberFormat | null = null;

function formatInteger(v: number): string {
  integerFormat ??= new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
  return integerFormat.format(v);
}

/** A human-sized number: thousands separators, about three significant digits below 1000. */
export function formatNumber(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "—";
  const abs = Math.abs(v);
  if (abs >= 1000) return formatInteger(v);
  if (Number.isInteger(v)) return String(v);
  if (abs >= 100) return v.toFixed(1);
  if (abs >= 10) return v.toFixed(2);
  if (abs >= 0.01) return v.toFixed(3);
  return v.toPrecision(3);
}

/** A latency with three significant digits: `6.56 ms`, `741 ms`, `8.98 s`. */
export function formatMs(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "—";
  const sig3 = (x: number): string => String(Number(x.toPrecision(3)));
  return Math.abs(v) >= 1000 ? `${sig3(v / 1000)} s` : `${sig3(v)} ms`;
}

/** A virtual duration: `1 h 02 min`, `12 min 30 s`, `45.2 s`. */
export function formatDuration(ms: number): string {
  const s = ms / 1000;
  if (s < 60) return `${formatNumber(s)} s`;
  const totalS = Math.round(s);
  const h = Math.floor(totalS / 3600);
  const m = Math.floor((totalS % 3600) / 60);
  const sec = totalS % 60;
  if (h > 0) return `${h} h ${String(m).padStart(2, "0")} min`;
  return `${m} min ${String(sec).padStart(2, "0")} s`;
}

export function formatPercent(fraction: number | null | undefined): string {
  if (fraction === null || fraction === undefined || !Number.isFinite(fraction)) return "—";
  return `${(fraction * 100).toFixed(1)}%`;
}

const HTML_ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

/**
 * JSON that is safe inside a `<script>` element: `<` (so `</script>` and `<!--`), and the line
 * separators JavaScript once refused in strings, are written as \u escapes.
 */
export function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}
