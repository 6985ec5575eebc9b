/**
 * Numeric formats as the perf tables name them. They live with the hardware (the op tables are
 * measured per format) so that model/ builds on hardware/ and not the other way round.
 */

/** GEMM / MoE weight precision. */
export type WeightDtype = "bfloat16" | "fp8" | "fp8_block";
/** KV-cache precision. */
export type KvDtype = "bfloat16" | "fp8";
