import { statSync } from "node:fs";
import { dirname, join } from "node:path";
import type { SlaSpec } from "../config/runSpec.js";
import { chartsLibrary } from "../report/html/asset.js";
import { type HtmlReportOptions, renderHtmlReport, writeHtmlReport } from "../report/html/index.js";
import { PredictionFileError, readPredictionFile } from "../report/html/readPrediction.js";
import type { OutputFile } from "../report/outputDir.js";
import type { Prediction } from "../report/prediction.js";
import type { Streams } from "./streams.js";

/** The report's file name, in an output directory and next to a prediction.json. */
export const REPORT_FILE = "report.html";

export interface ReportOptions {
  readonly input: string;
  /** Default: report.html next to the input; an existing directory gets report.html inside. */
  readonly output?: string;
  readonly title?: string;
  readonly slaTtftMs?: number;
  readonly slaItlMs?: number;
}

/** `fleetsim report`: render a prediction.json as a self-contained HTML page. */
export async function reportCommand(opts: ReportOptions, io: Streams): Promise<void> {
  const prediction = readPredictionFile(opts.input);
  const target = reportPath(opts);
  const options: HtmlReportOptions = {
    title: opts.title,
    sla: { ttftMs: opts.slaTtftMs, itlMs: opts.slaItlMs },
  };
  try {
    await writeHtmlReport(prediction, target, options);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // A destination the user named but cannot be written is their mistake (exit 2).
    if (
      code === "EACCES" ||
      code === "EPERM" ||
      code === "ENOTDIR" ||
      code === "EROFS" ||
      code === "EISDIR"
    ) {
      throw new PredictionFileError(`cannot write ${target}: ${(err as Error).message}`);
    }
    throw err;
  }
  io.out(`Saved HTML report to: ${target}\n`);
}

function reportPath(opts: ReportOptions): string {
  if (opts.output === undefined) return join(dirname(opts.input), REPORT_FILE);
  try {
    if (statSync(opts.output).isDirectory()) return join(opts.output, REPORT_FILE);
  } catch {
    // not there yet: a file path
  }
  return opts.output;
}

/**
 * Fails before a `predict --html` run when the report cannot be rendered (its charts bundle is
 * missing from a broken install), rather than after the replay.
 */
export function checkHtmlReportReady(): void {
  chartsLibrary();
}

/** report.html for `predict --html`: the SLA lines are the run's goodput SLA when it has one. */
export function htmlReportFile(prediction: Prediction, sla: SlaSpec | null): OutputFile {
  const html = renderHtmlReport(prediction, {
    sla: { ttftMs: sla?.ttftMs ?? undefined, itlMs: sla?.itlMs ?? undefined },
  });
  return { name: REPORT_FILE, chunks: [html] };
}
