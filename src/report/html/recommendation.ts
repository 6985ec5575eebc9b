/**
 * The page of a recommendation (`fleetsim report rec/recommendation.json`; docs/recommend.md
 * "Report"): every replayed candidate on the reference's Pareto plane — output tokens/s per GPU
 * against output tokens/s per user — with the non-dominated front joined and the chosen
 * configuration (rank 1 of the active view) marked, then the ranked table. Same page layout and
 * charts library as the report.
 */
import { type CandidateRecordDocument, recommendationSchema } from "../../output/recommendation.js";
import { UserError } from "../../util/userError.js";
import { chartsLibrary } from "./asset.js";
import { LEGEND, round } from "./charts.js";
import { escapeHtml, formatNumber } from "./format.js";
import { renderPage } from "./page.js";

/** Whether a parsed JSON file is a recommendation.json (rather than a prediction.json). */
export function isRecommendation(doc: unknown): boolean {
  return typeof doc === "object" && doc !== null && "candidates" in doc && "views" in doc && "counts" in doc;
}

interface Plotted {
  readonly c: CandidateRecordDocument;
  readonly perGpu: number;
  readonly perUser: number;
}

/** The two Pareto objectives of a replayed candidate, from its metrics (any target). */
function plane(c: CandidateRecordDocument): Plotted | null {
  const m = c.metrics;
  const hours = (m["duration_ms"] ?? 0) / 3.6e6;
  const avgGpus = hours > 0 ? (m["gpu_hours"] ?? 0) / hours : 0;
  const perUser = m["mean_output_token_throughput_per_user"];
  if (avgGpus <= 0 || perUser === undefined) return null;
  return { c, perGpu: (m["output_throughput_tok_s"] ?? 0) / avgGpus, perUser };
}

function front(points: readonly Plotted[]): Plotted[] {
  const dominated = (a: Plotted) =>
    points.some(
      (b) =>
        b !== a &&
        b.perGpu >= a.perGpu &&
        b.perUser >= a.perUser &&
        (b.perGpu > a.perGpu || b.perUser > a.perUser),
    );
  return points.filter((p) => !dominated(p)).sort((a, b) => a.perUser - b.perUser);
}

export function renderRecommendationPage(doc: unknown, path: string, version: string): string {
  const parsed = recommendationSchema.safeParse(doc);
  if (!parsed.success) {
    throw new UserError(
      `${path} is not a recommendation.json fleetsim can read: ${parsed.error.issues[0].message} at ${parsed.error.issues[0].path.join(".")}`,
    );
  }
  const r = parsed.data;
  const selected = r.views.pareto_front.length > 0 ? r.views.pareto_front : r.views.top_n;
  const chosenId = selected[0] ?? null;
  const points = r.candidates.map(plane).filter((p): p is Plotted => p !== null);
  const feasible = points.filter((p) => p.c.status === "feasible");
  const rejected = points.filter((p) => p.c.status !== "feasible");
  const pareto = front(feasible);
  const chosen = points.find((p) => p.c.candidate_id === chosenId) ?? null;
  const xy = (p: Plotted) => ({ value: [round(p.perUser), round(p.perGpu)], name: p.c.candidate_id });
  const option = {
    animation: false,
    grid: { left: 64, right: 24, top: 48, bottom: 48 },
    legend: LEGEND,
    tooltip: { trigger: "axis", axisPointer: { type: "cross" }, confine: true },
    xAxis: { type: "value", name: "output tok/s per user", nameLocation: "middle", nameGap: 28, scale: true },
    yAxis: { type: "value", name: "output tok/s per GPU", scale: true },
    series: [
      { type: "scatter", name: "feasible", data: feasible.map(xy), symbolSize: 8, color: "#93c5fd" },
      {
        type: "scatter",
        name: "rejected (replayed)",
        data: rejected.map(xy),
        symbolSize: 7,
        color: "#cbd5e1",
      },
      {
        type: "line",
        name: "Pareto front",
        data: pareto.map(xy),
        color: "#2563eb",
        symbol: "circle",
        symbolSize: 7,
        lineStyle: { width: 2 },
      },
      ...(chosen === null
        ? []
        : [
            {
              type: "scatter",
              name: `chosen: ${chosen.c.candidate_id}`,
              data: [xy(chosen)],
              symbol: "pin",
              symbolSize: 28,
              color: "#dc2626",
              z: 10,
            },
          ]),
    ],
  };
  const byId = new Map(r.candidates.map((c) => [c.candidate_id, c]));
  const rows = selected
    .slice(0, 20)
    .map((id, i) => {
      const c = byId.get(id);
      const p = c === undefined ? null : plane(c);
      return (
        `<tr><th>${i + 1}</th><td>${escapeHtml(id)}</td><td>${formatNumber(c?.score ?? null)}</td><td>${c?.used_gpus ?? "N/A"}</td>` +
        `<td>${formatNumber(p?.perGpu ?? null)}</td><td>${formatNumber(p?.perUser ?? null)}</td>` +
        `<td>${escapeHtml(JSON.stringify(c?.config ?? {}))}</td></tr>`
      );
    })
    .join("");
  const table =
    `<table><thead><tr><th>Rank</th><th>Candidate</th><th>Score</th><th>GPUs</th><th>tok/s per GPU</th>` +
    `<th>tok/s per user</th><th>Config</th></tr></thead><tbody>${rows}</tbody></table>`;
  const target = String(
    (r.provenance["config"] as { optimization?: { target?: string } } | undefined)?.optimization?.target ??
      "throughput",
  );
  return renderPage({
    title: "fleetsim recommendation",
    subtitle: `${r.counts.trials} trials, ${r.counts.feasible} feasible of ${r.candidates.length} candidates; target ${target}`,
    facts: [
      { label: "evaluated", value: String(r.counts.evaluated) },
      { label: "infeasible", value: String(r.counts.infeasible) },
      { label: "failed", value: String(r.counts.failed + r.counts.timed_out) },
      { label: "cache hits", value: String(r.counts.cache_hits) },
      { label: "chosen", value: chosenId ?? "none" },
    ],
    kpis: [],
    sections: [
      {
        title: "Pareto front",
        charts: [
          {
            id: "pareto",
            title: "Throughput per GPU against throughput per user",
            note: "Every replayed candidate; the non-dominated front joined; the chosen configuration (rank 1) pinned.",
            wide: true,
            option: option as never,
          },
        ],
      },
    ],
    notices: points.length === 0 ? ["No candidate was replayed: nothing to plot."] : [],
    alerts: [],
    summaryHtml: table,
    retuneHtml: "",
    timeUnit: "tok/s/user",
    xLabel: "per user",
    footer: `Generated by fleetsim ${version} from ${path}. Charts: Apache ECharts, inlined; the page loads nothing from the network.`,
    chartsLibrary: chartsLibrary(),
  });
}
