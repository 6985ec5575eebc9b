/** The report page: markup, styles and the inlined scripts, assembled into one self-contained file. */
import type { ChartSection } from "./charts.js";
import { CLIENT_SCRIPT } from "./clientScript.js";
import { escapeHtml, scriptSafeJson } from "./format.js";
import type { Fact, Kpi } from "./summary.js";

export interface PageParts {
  title: string;
  subtitle: string;
  facts: Fact[];
  kpis: Kpi[];
  sections: ChartSection[];
  /** Shown above the charts (e.g. an older prediction.json without time series). */
  notices: string[];
  /** Warnings shown above the notices (provisioned GPUs above the budget, a saturated run). */
  alerts: string[];
  summaryHtml: string;
  /** The retune decisions table (HTML), "" when the run did not retune. */
  retuneHtml: string;
  timeUnit: string;
  /** What the tooltip's head names the x value (default `t`, virtual time). */
  xLabel?: string;
  footer: string;
  chartsLibrary: string;
}

export function renderPage(p: PageParts): string {
  const payload = {
    timeUnit: p.timeUnit,
    xLabel: p.xLabel ?? "t",
    charts: p.sections.flatMap((s) => s.charts.map((c) => ({ id: c.id, title: c.title, option: c.option }))),
  };
  const facts = p.facts
    .map((f) => `<div class="fact"><span>${escapeHtml(f.label)}</span><b>${escapeHtml(f.value)}</b></div>`)
    .join("");
  const kpis = p.kpis
    .map(
      (k) =>
        `<div class="kpi${k.alert === true ? " alert" : ""}"><div class="kpi-label">${escapeHtml(k.label)}</div>` +
        `<div class="kpi-value">${escapeHtml(k.value)}</div><div class="kpi-detail">${escapeHtml(k.detail)}</div></div>`,
    )
    .join("");
  const notices = [
    ...p.alerts.map((n) => `<p class="notice alert" role="alert">${escapeHtml(n)}</p>`),
    ...p.notices.map((n) => `<p class="notice">${escapeHtml(n)}</p>`),
  ].join("");
  const sections = p.sections
    .map((s) => {
      const cards = s.charts
        .map(
          (c) =>
            `<figure class="card${c.wide ? " wide" : ""}"><figcaption><h3>${escapeHtml(c.title)}</h3>` +
            `<p>${escapeHtml(c.note)}</p></figcaption><div class="chart" id="chart-${escapeHtml(c.id)}"></div></figure>`,
        )
        .join("");
      return `<section><h2>${escapeHtml(s.title)}</h2><div class="grid">${cards}</div></section>`;
    })
    .join("");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(p.title)}</title>
<style>${STYLES}</style>
</head>
<body>
<header>
<div class="wrap">
<h1>${escapeHtml(p.title)}</h1>
<p class="subtitle">${escapeHtml(p.subtitle)}</p>
<div class="facts">${facts}</div>
</div>
</header>
<main class="wrap">
<div class="kpis">${kpis}</div>
${notices}
${sections}
${p.retuneHtml === "" ? "" : `<section><h2>Retune decisions</h2><div class="card summary">${p.retuneHtml}</div></section>`}
<section><h2>Summary</h2><div class="card summary">${p.summaryHtml}</div></section>
</main>
<footer class="wrap">${escapeHtml(p.footer)}</footer>
<script type="application/json" id="fleetsim-data">${scriptSafeJson(payload)}</script>
<script>${p.chartsLibrary}</script>
<script>${CLIENT_SCRIPT}</script>
</body>
</html>
`;
}

// System fonts only: the page must load nothing from the network.
const STYLES = `
:root {
  --bg: #f4f6f9; --card: #ffffff; --ink: #0f172a; --muted: #64748b; --line: #e2e8f0;
  --accent: #2563eb; --head: #0f172a;
}
* { box-sizing: border-box; }
body {
  margin: 0; background: var(--bg); color: var(--ink);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
.wrap { max-width: 1360px; margin: 0 auto; padding: 0 24px; }
header { background: var(--head); color: #f8fafc; padding: 22px 0 18px; }
h1 { margin: 0; font-size: 22px; font-weight: 650; letter-spacing: -0.01em; }
.subtitle { margin: 4px 0 14px; color: #cbd5e1; }
.facts { display: flex; flex-wrap: wrap; gap: 8px; }
.fact {
  display: flex; gap: 6px; align-items: baseline; padding: 4px 10px; border-radius: 999px;
  background: rgba(255, 255, 255, 0.08); border: 1px solid rgba(255, 255, 255, 0.14); font-size: 12.5px;
}
.fact span { color: #94a3b8; }
.fact b { font-weight: 600; color: #f1f5f9; }
.kpis {
  display: grid; grid-template-columns: repeat(auto-fit, minmax(190px, 1fr)); gap: 12px; margin: 20px 0 8px;
}
.kpi { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 12px 14px; }
.kpi-label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: 0.04em; }
.kpi-value { font-size: 21px; font-weight: 650; margin: 2px 0; font-variant-numeric: tabular-nums; }
.kpi-detail { color: var(--muted); font-size: 12.5px; }
.notice {
  background: #fffbeb; border: 1px solid #fcd34d; color: #78350f; border-radius: 8px; padding: 8px 12px;
}
.notice.alert { background: #fef2f2; border-color: #fca5a5; color: #7f1d1d; font-weight: 550; }
.kpi.alert { border-color: #fca5a5; background: #fef2f2; }
.kpi.alert .kpi-value { color: #b91c1c; }
section h2 { font-size: 15px; margin: 22px 0 10px; color: #334155; font-weight: 650; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(560px, 1fr)); gap: 14px; }
.card {
  background: var(--card); border: 1px solid var(--line); border-radius: 10px; margin: 0; padding: 12px 14px 6px;
  min-width: 0;
}
.card.wide { grid-column: 1 / -1; }
figcaption h3 { margin: 0; font-size: 14px; font-weight: 620; }
figcaption p { margin: 2px 0 4px; color: var(--muted); font-size: 12.5px; }
.chart { width: 100%; height: 300px; }
.card.wide .chart { height: 320px; }
.summary { padding: 14px; }
.table-wrap { overflow-x: auto; }
table.metrics { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
table.metrics th, table.metrics td { padding: 6px 10px; border-bottom: 1px solid var(--line); text-align: right; }
table.metrics thead th { color: var(--muted); font-weight: 600; font-size: 12px; text-transform: uppercase; }
table.metrics th[scope="row"], table.metrics thead th:first-child { text-align: left; font-weight: 550; }
table.metrics tbody tr:hover { background: #f8fafc; }
table.retune td { text-align: left; font-size: 13px; }
.outcome { display: inline-block; padding: 1px 8px; border-radius: 999px; background: #e2e8f0; font-weight: 600; }
.outcome-applied { background: #dcfce7; color: #166534; }
.outcome-advisory { background: #e0e7ff; color: #3730a3; }
.outcome-timeout, .outcome-failed { background: #fee2e2; color: #991b1b; }
p.muted { color: var(--muted); margin: 0; }
.kv-grid {
  display: grid; grid-template-columns: repeat(auto-fill, minmax(330px, 1fr)); gap: 0 24px; margin-top: 16px;
}
.kv {
  display: flex; justify-content: space-between; gap: 12px; padding: 5px 2px; border-bottom: 1px dashed var(--line);
  font-variant-numeric: tabular-nums;
}
.kv code { color: #475569; font-size: 12.5px; }
.kv em.host { margin-left: auto; margin-right: 8px; color: #92400e; font-style: normal; font-size: 11px; text-transform: uppercase; }
h3.host-head { font-size: 13px; font-weight: 600; color: #92400e; margin: 18px 0 0; }
footer { color: var(--muted); font-size: 12px; padding-top: 18px; padding-bottom: 28px; }
.tt-head { color: #64748b; margin-bottom: 2px; }
@media (max-width: 640px) { .grid { grid-template-columns: 1fr; } }
`;
