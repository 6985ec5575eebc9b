/**
 * The AIPerf-style console summary printed by `predict` (`ai-dynamo/aisimulate@99e6216:python/aisimulate/src/aisimulate/replay/reporting.py`; layout of Dynamo's
 * `replay/reporting.py format_report_table`): a title line, a box-drawn table with heavy borders
 * and right-aligned numbers, then the wall-time and prefix-cache lines. No colours.
 */
import Table from "cli-table3";
import { formatNumber } from "./formatNumber.js";

export const SUMMARY_TITLE = "NVIDIA AIPerf | LLM Metrics";
export const STAT_COLUMNS = ["avg", "min", "max", "p99", "p90", "p75", "std"] as const;

/** A summary as printed: its numbers, and the reference's power and provenance keys where present. */
export type Summary = Readonly<Record<string, unknown>>;

function num(summary: Summary, key: string): number | null | undefined {
  const v = summary[key];
  return typeof v === "number" || v === null ? v : undefined;
}

/** Distribution rows: label and key suffix (`mean_<suffix>` must be present for the row to appear). */
const STAT_ROWS: readonly (readonly [string, string])[] = [
  ["Time to First Token (ms)", "ttft_ms"],
  ["Time to Second Token (ms)", "ttst_ms"],
  ["Request Latency (ms)", "e2e_latency_ms"],
  ["Inter Token Latency (ms)", "itl_ms"],
  ["Output Token Throughput Per User (tokens/sec/user)", "output_token_throughput_per_user"],
];

/** Key prefixes feeding the avg, min, max, p99, p90, p75, std columns. */
const STAT_PREFIXES = ["mean", "min", "max", "p99", "p90", "p75", "std"] as const;

const NA = "N/A";

function present(summary: Summary, key: string): boolean {
  return Object.hasOwn(summary, key) && summary[key] !== undefined;
}

function buildRows(summary: Summary): string[][] {
  const rows: string[][] = [];
  for (const [label, suffix] of STAT_ROWS) {
    if (!present(summary, `mean_${suffix}`)) continue;
    rows.push([label, ...STAT_PREFIXES.map((p) => formatNumber(num(summary, `${p}_${suffix}`)))]);
  }
  const single = (label: string, value: number | null | undefined | string): string[] => [
    label,
    typeof value === "string" ? value : formatNumber(value),
    ...STAT_COLUMNS.slice(1).map(() => NA),
  ];
  rows.push(single("Output Token Throughput (tokens/sec)", num(summary, "output_throughput_tok_s")));
  rows.push(single("Request Throughput (requests/sec)", num(summary, "request_throughput_rps")));
  const count = present(summary, "completed_requests")
    ? num(summary, "completed_requests")
    : num(summary, "num_requests");
  rows.push(single("Request Count (requests)", count));
  // Power rows as aisimulate 0.13 prints them when the summary has `power_coverage` (docs/metrics.md "Printed summary").
  if (Object.hasOwn(summary, "power_coverage")) {
    const coverage = num(summary, "power_coverage");
    const power = num(summary, "power_w");
    const unsupported = "unavailable (energy provider or topology unsupported)";
    rows.push(
      single(
        "Active Power per GPU (W) [power_w]",
        typeof power === "number"
          ? power
          : typeof coverage === "number"
            ? "unavailable (insufficient energy coverage)"
            : unsupported,
      ),
    );
    rows.push(
      single(
        "Power Data Coverage (%) [power_coverage]",
        typeof coverage === "number" ? coverage * 100 : unsupported,
      ),
    );
  }
  return rows;
}

/** The table alone (no title, no trailing lines). */
export function renderMetricsTable(rows: readonly (readonly string[])[]): string {
  const table = new Table({
    head: ["Metric", ...STAT_COLUMNS],
    colAligns: ["left", ...STAT_COLUMNS.map(() => "right" as const)],
    chars: {
      top: "━",
      "top-mid": "┳",
      "top-left": "┏",
      "top-right": "┓",
      bottom: "━",
      "bottom-mid": "┴",
      "bottom-left": "└",
      "bottom-right": "┘",
      left: "┃",
      "left-mid": "┡",
      mid: "━",
      "mid-mid": "╇",
      right: "┃",
      "right-mid": "┩",
      middle: "┃",
    },
    style: { head: [], border: [], compact: true, "padding-left": 1, "padding-right": 1 },
  });
  for (const row of rows) table.push([...row]);
  return table.toString();
}

/**
 * The table's last line as the reference prints it with `--stack dynamo` (seed 000: "The table's
 * last line, `Timing (runner): unavailable`, is expected with `--stack dynamo`"), printed here
 * for a summary without `prediction_provenance` (an older file).
 */
export const RUNNER_TIMING_LINE = "Timing (runner): unavailable";

/**
 * One `Timing (<role>): estimator=…; source=…; data_version=…` line per role of
 * `prediction_provenance`, as the reference's engine stack prints them.
 */
function timingLines(summary: Summary): string[] {
  const p = summary["prediction_provenance"];
  if (typeof p !== "object" || p === null) return [RUNNER_TIMING_LINE];
  const lines: string[] = [];
  for (const [role, v] of Object.entries(p as Record<string, Record<string, unknown>>)) {
    const version =
      typeof v["data_version"] === "string"
        ? v["data_version"]
        : `unavailable (${String(v["data_version_unavailable_reason"] ?? "unknown")})`;
    lines.push(
      `Timing (${role}): estimator=${String(v["estimator"])}; source=${String(v["timing_source"])}; data_version=${version}`,
    );
  }
  return lines.length > 0 ? lines : [RUNNER_TIMING_LINE];
}

/**
 * Renders the printed summary: title, table, then `Wall Time (ms)`, `Prefix Cache Reused Ratio`
 * and `First Admission Prefix Cache Reused Ratio` lines (each only when the key holds a number),
 * and last the KV-cache precision and timing provenance lines. Lines are joined with `\n`, no trailing newline.
 */
export function renderSummaryTable(summary: Summary): string {
  const lines = [SUMMARY_TITLE, renderMetricsTable(buildRows(summary))];
  const tail: readonly (readonly [string, string])[] = [
    ["Wall Time (ms)", "wall_time_ms"],
    ["Prefix Cache Reused Ratio", "prefix_cache_reused_ratio"],
    ["First Admission Prefix Cache Reused Ratio", "first_admission_prefix_cache_reused_ratio"],
  ];
  for (const [label, key] of tail) {
    const v = summary[key];
    if (typeof v === "number") lines.push(`${label}: ${formatNumber(v)}`);
  }
  lines.push(...kvCacheLines(summary), ...timingLines(summary));
  return lines.join("\n");
}

/**
 * One `KV cache (<role>): <dtype> (source: <source>)` line per role of `kv_cache_precision`, as
 * the reference's engine stack prints them before the timing lines.
 */
function kvCacheLines(summary: Summary): string[] {
  const p = summary["kv_cache_precision"];
  if (typeof p !== "object" || p === null) return [];
  return Object.entries(p as Record<string, Record<string, unknown>>).map(
    ([role, v]) => `KV cache (${role}): ${String(v["dtype"])} (source: ${String(v["source"])})`,
  );
}
