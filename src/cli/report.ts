import { readFileSync, statSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { SlaSpec } from "../config/runSpec.js";
import { chartsLibrary } from "../report/html/asset.js";
import { type HtmlReportOptions, renderHtmlReport, writeHtmlReport } from "../report/html/index.js";
import { PredictionFileError, readPredictionFile } from "../report/html/readPrediction.js";
import { isRecommendation } from "../report/html/recommendation.js";
import type { OutputFile } from "../report/outputDir.js";
import type { Prediction } from "../report/prediction.js";
import { packageVersion } from "../util/packageRoot.js";
import type { Streams } from "./streams.js";

/** The report's file name, in an output directory and next to a prediction.json. */
export const REPORT_FILE = "report.html";

const VERSION = packageVersion();

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
  const recommendation = readRecommendation(opts.input);
  if (recommendation !== null) {
    const { renderRecommendationPage } = await import("../report/html/recommendation.js");
    const target = reportPath(opts, RECOMMENDATION_REPORT_FILE);
    await writeReport(target, renderRecommendationPage(recommendation, opts.input, VERSION));
    io.out(`Saved HTML report to: ${target}\n`);
    return;
  }
  const prediction = readPredictionFile(opts.input, (line) => io.err(`fleetsim: note: ${line}\n`));
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

/** The page of a recommendation.json, next to it by default. */
export const RECOMMENDATION_REPORT_FILE = "recommendation.html";

/** A recommendation.json's document, or null for anything else (read as a prediction). */
function readRecommendation(path: string): unknown {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(path, "utf8").replace(/^\uFEFF/, ""));
  } catch {
    return null; // readPredictionFile says what is wrong with the file
  }
  return isRecommendation(doc) ? doc : null;
}

async function writeReport(target: string, html: string): Promise<void> {
  try {
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, html);
  } catch (err) {
    throw new PredictionFileError(`cannot write ${target}: ${(err as Error).message}`);
  }
}

function reportPath(opts: ReportOptions, file = REPORT_FILE): string {
  if (opts.output === undefined) return join(dirname(opts.input), file);
  try {
    if (statSync(opts.output).isDirectory()) return join(opts.output, file);
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
