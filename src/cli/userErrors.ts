import { ConfigError } from "../config/errors.js";
import { HardwareError } from "../hardware/errors.js";
import { ModelError } from "../model/errors.js";
import { PredictionFileError } from "../report/html/readPrediction.js";
import { OutputDirError } from "../report/outputDir.js";
import { TraceWriteError } from "../traffic/dynamoTraceWriter.js";
import { TraceError } from "../traffic/traceError.js";
import { ConvertUsageError } from "./convert.js";
import { EstimateUsageError } from "./estimate.js";

/** Errors that are the user's mistake (exit 2, one clear message), not execution failures. */
export function isUserError(err: unknown): boolean {
  return (
    err instanceof ConfigError ||
    err instanceof TraceError ||
    err instanceof OutputDirError ||
    err instanceof ModelError ||
    err instanceof HardwareError ||
    err instanceof EstimateUsageError ||
    err instanceof ConvertUsageError ||
    err instanceof TraceWriteError ||
    err instanceof PredictionFileError
  );
}
