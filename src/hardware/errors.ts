import { UserError } from "../util/userError.js";

/**
 * A user-facing hardware error: an unknown GPU id, a perf-data directory that does not hold the
 * expected tables, or an operation the measured tables cannot answer (e.g. FP8 GEMM on A100).
 * The message says what was asked and what is available.
 */
export class HardwareError extends UserError {
  override readonly name = "HardwareError";
}
