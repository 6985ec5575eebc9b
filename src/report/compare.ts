/**
 * `fleetsim compare` (docs/report.md "Comparing runs"): two or more predictions side by side —
 * delivered throughput, goodput and SLA attainment, latency, GPU time and cost — with each run's
 * change against the first. Read through the report's tolerant model, so files of older versions
 * (or aisimulate's) compare as far as they carry the keys. Pure: the CLI reads and prints.
 */
import { basename, dirname } from "node:path";
import type { ReadPrediction } from "../output/read.js";
import { usd } from "./fleetBlock.js";
import { formatNumber } from "./formatNumber.js";
import { type ReportModel, readReportModel } from "./html/model.js";

export interface CompareRun {
  readonly label: string;
  readonly path: string;
  readonly model: ReportModel;
}

export interface CompareRow {
  readonly label: string;
  readonly values: readonly (number | null)[];
  /** Which direction is an improvement (colours the HTML deltas); null: neither. */
  readonly better: "higher" | "lower" | null;
  /**
   * How values print: dollars (small ones with four significant digits), whole counts, or numbers
   * (`fine`: below 1 with three significant digits, so 0.0065 GPU-hours does not print as 0.01).
   */
  readonly format?: "usd" | "count" | "fine";
  /**
   * How a change prints: relative to the base run (`+12.3%`, the default), or in percentage points
   * for a row that is itself a percentage (`+4.0 pp`: 90 % → 94 % is not a 4.4 % change).
   */
  readonly change?: "relative" | "points";
}

/**
 * Labels: each file's folder name; where two share it, the last two folders (`run-a/out`), then
 * the whole path.
 */
export function compareRuns(files: readonly { path: string; doc: ReadPrediction }[]): CompareRun[] {
  const folder = (p: string) => basename(dirname(p)) || p;
  const two = (p: string) => `${basename(dirname(dirname(p)))}/${folder(p)}`;
  const unique = (names: string[], i: number) => names.filter((n) => n === names[i]).length === 1;
  const one = files.map((f) => folder(f.path));
  const both = files.map((f) => two(f.path));
  return files.map((f, i) => ({
    label: unique(one, i) ? one[i] : unique(both, i) ? both[i] : f.path,
    path: f.path,
    model: readReportModel(f.doc),
  }));
}

export function compareRows(runs: readonly CompareRun[]): CompareRow[] {
  const key = (k: string) => runs.map((r) => r.model.summary[k] ?? null);
  const rows: CompareRow[] = [
    { label: "Requests completed", values: key("completed_requests"), better: "higher", format: "count" },
    { label: "Duration (s)", values: runs.map((r) => r.model.durationMs / 1000), better: null },
    { label: "Output throughput (tok/s)", values: key("output_throughput_tok_s"), better: "higher" },
    { label: "Request throughput (req/s)", values: key("request_throughput_rps"), better: "higher" },
    { label: "Goodput (req/s)", values: key("goodput_request_throughput_rps"), better: "higher" },
    {
      label: "SLA attainment (%)",
      values: runs.map((r) =>
        r.model.fleet.slaAttainment === null ? null : r.model.fleet.slaAttainment * 100,
      ),
      better: "higher",
      change: "points",
    },
    { label: "TTFT mean (ms)", values: key("mean_ttft_ms"), better: "lower" },
    { label: "TTFT p99 (ms)", values: key("p99_ttft_ms"), better: "lower" },
    { label: "ITL mean (ms)", values: key("mean_itl_ms"), better: "lower" },
    { label: "ITL p99 (ms)", values: key("p99_itl_ms"), better: "lower" },
    { label: "E2E mean (ms)", values: key("mean_e2e_latency_ms"), better: "lower" },
    { label: "GPU-hours", values: key("gpu_hours"), better: "lower", format: "fine" },
    { label: "Mean GPUs", values: runs.map((r) => r.model.fleet.meanGpus), better: "lower", format: "fine" },
    { label: "Peak GPUs", values: runs.map((r) => r.model.fleet.peakGpus), better: "lower", format: "count" },
    { label: "Cost (USD)", values: key("cost_usd"), better: "lower", format: "usd" },
    {
      label: "Cost per 1M output tokens (USD)",
      values: key("cost_per_million_output_tokens_usd"),
      better: "lower",
      format: "usd",
    },
    {
      label: "Cost per good request (USD)",
      values: key("cost_per_good_request_usd"),
      better: "lower",
      format: "usd",
    },
  ];
  // A metric no run has is left out; one some runs lack shows N/A there.
  return rows.filter((r) => r.values.some((v) => v !== null));
}

/** `+12.3%` of `value` against `base`; null when either is missing or the base is 0. */
export function delta(base: number | null, value: number | null): number | null {
  if (base === null || value === null || base === 0) return null;
  return ((value - base) / Math.abs(base)) * 100;
}

export function formatDelta(d: number | null): string {
  if (d === null) return "N/A";
  const rounded = Number(d.toFixed(1));
  return `${rounded > 0 ? "+" : ""}${rounded.toFixed(1)}%`;
}

/**
 * A later run's change against the base on one row, from the unrounded values: relative (%), or
 * the difference in percentage points for a `points` row; null when it cannot be computed.
 */
export function rowChange(row: CompareRow, base: number | null, value: number | null): number | null {
  if (row.change !== "points") return delta(base, value);
  return base === null || value === null ? null : value - base;
}

/** `rowChange` as printed: `+12.3%`, or `+4.0 pp` for a `points` row. */
export function formatRowChange(row: CompareRow, d: number | null): string {
  if (row.change !== "points" || d === null) return formatDelta(d);
  const rounded = Number(d.toFixed(1));
  return `${rounded > 0 ? "+" : ""}${rounded.toFixed(1)} pp`;
}

export function formatValue(v: number | null, format: CompareRow["format"]): string {
  if (v === null) return "N/A";
  if (format === "usd") return usd(v);
  if (format === "count" && Number.isInteger(v)) return v.toLocaleString("en-US");
  if (format === "fine" && v !== 0 && Math.abs(v) < 1) return Number(v.toPrecision(3)).toString();
  return formatNumber(v);
}

/** The terminal table: a column per run, and after each later run its change against the first. */
export function renderCompareTable(runs: readonly CompareRun[], rows: readonly CompareRow[]): string {
  const header = ["Metric"];
  runs.forEach((r, i) => {
    header.push(r.label);
    if (i > 0) header.push(`Δ vs ${runs[0].label}`);
  });
  const body = rows.map((row) => {
    const cells = [row.label];
    row.values.forEach((v, i) => {
      cells.push(formatValue(v, row.format));
      if (i > 0) cells.push(formatRowChange(row, rowChange(row, row.values[0], v)));
    });
    return cells;
  });
  const widths = header.map((h, c) => Math.max(h.length, ...body.map((b) => b[c].length)));
  const fmt = (cells: string[]) =>
    cells.map((s, c) => (c === 0 ? s.padEnd(widths[c]) : s.padStart(widths[c]))).join("  ");
  const rule = widths.map((w) => "─".repeat(w)).join("  ");
  const lines = ["fleetsim compare", fmt(header), rule, ...body.map(fmt)];
  for (const [i, r] of runs.entries())
    lines.push(`${i === 0 ? "base" : `run ${i + 1}`}: ${r.label} = ${r.path}`);
  return lines.join("\n");
}
