import { basename } from "node:path";
import { type CalibrationProfile, PROFILE_FORMAT } from "../config/calibrationProfile.js";
import { DEFAULT_CLIENT, type RunSpec } from "../config/runSpec.js";
import { runPrediction } from "../pipeline/run.js";
import { readTextFile } from "../util/fsRead.js";
import { UserError } from "../util/userError.js";
import { type MeasuredMeans, readBenchmarkResults } from "./benchmarkResults.js";
import { fitClientOverheadMs } from "./fit.js";

export interface EngineSideMeans {
  readonly ttftMeanMs: number;
  readonly itlMeanMs: number;
  readonly e2eMeanMs: number;
  readonly completed: number;
}

export interface CalibrationOutcome {
  readonly profile: CalibrationProfile;
  readonly measured: ReadonlyArray<{ readonly file: string; readonly means: MeasuredMeans }>;
  readonly engineSide: EngineSideMeans;
}

/** Reads one results file; a file that is missing, not JSON or of no known format is the user's (exit 2). */
export function readResultsFile(path: string): MeasuredMeans {
  const text = readTextFile(path);
  if (typeof text !== "string") {
    throw new UserError(`${path}: ${text.code === "ENOENT" ? "file not found" : text.message}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new UserError(`${path}: not JSON (${(err as Error).message})`);
  }
  const r = readBenchmarkResults(doc);
  if ("error" in r) throw new UserError(`${path}: ${r.error}`);
  return r;
}

/** The spec as the engine sees it: no client overhead, no profile (the client's timeout stays). */
export function engineSideSpec(spec: RunSpec): RunSpec {
  const timeoutMs = spec.client?.timeoutMs ?? null;
  return { ...spec, client: { ...DEFAULT_CLIENT, timeoutMs } };
}

export async function calibrate(
  spec: RunSpec,
  resultsFiles: readonly string[],
  name: string,
): Promise<CalibrationOutcome> {
  if (resultsFiles.length === 0) throw new UserError("calibrate needs at least one --results file");
  const measured = resultsFiles.map((file) => ({ file, means: readResultsFile(file) }));
  const { prediction } = await runPrediction(engineSideSpec(spec), { capturePerRequest: false }, {});
  const s = prediction.summary;
  const engineSide: EngineSideMeans = {
    ttftMeanMs: s.mean_ttft_ms,
    itlMeanMs: s.mean_itl_ms,
    e2eMeanMs: s.mean_e2e_latency_ms,
    completed: s.completed_requests,
  };
  const requestMs = fitClientOverheadMs(
    measured.map((m) => ({ engine: engineSide.ttftMeanMs, measured: m.means.ttftMeanMs })),
  );
  const round = (x: number) => Math.round(x * 1000) / 1000;
  const profile: CalibrationProfile = {
    calibration_profile: PROFILE_FORMAT,
    name,
    fitted_on: measured.map((m) => ({
      file: basename(m.file),
      format: m.means.format,
      measured: {
        ttft_mean_ms: round(m.means.ttftMeanMs),
        itl_mean_ms: m.means.itlMeanMs === null ? null : round(m.means.itlMeanMs),
        e2e_mean_ms: m.means.e2eMeanMs === null ? null : round(m.means.e2eMeanMs),
        completed: m.means.completed,
      },
      engine_side: {
        ttft_mean_ms: round(engineSide.ttftMeanMs),
        itl_mean_ms: round(engineSide.itlMeanMs),
        e2e_mean_ms: round(engineSide.e2eMeanMs),
        completed: engineSide.completed,
      },
    })),
    client: { overhead: { request_ms: round(requestMs) } },
  };
  return { profile, measured, engineSide };
}
