/**
 * Where the API writes the HTML report. The reference's replay writes its Planner diagnostics
 * report to `./planner_reports/` with the PlannerConfig defaults (seed 000 "Run from Python");
 * fleetsim keeps that directory and names the file after the UTC time of the call, adding `-2`,
 * `-3`, … rather than overwriting an earlier report.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

export const DEFAULT_REPORT_DIR = "planner_reports";

/** An absolute path for a new report under `baseDir/planner_reports/`. */
export function defaultReportPath(baseDir: string, now: Date = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  const dir = resolve(baseDir, DEFAULT_REPORT_DIR);
  const name = (n: number): string => join(dir, `planner-report-${stamp}${n === 1 ? "" : `-${n}`}.html`);
  let n = 1;
  while (existsSync(name(n))) n++;
  return name(n);
}
