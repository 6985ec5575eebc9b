import type { RunSpec } from "../../src/config/runSpec.js";
import { buildSummary } from "../../src/metrics/summary.js";
import { loadWorkload } from "../../src/pipeline/index.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import { Replay } from "../../src/sim/replay.js";
import type { RequestTable } from "../../src/traffic/requests.js";

/** Replays `spec` in process (per-request capture on unless told), to the end. */
export async function runReplay(spec: RunSpec, capture = true) {
  const table = await loadWorkload(spec);
  const replay = new Replay(spec, table, await createRoleTimings(spec.engine), {
    capturePerRequest: capture,
  });
  return { replay, result: replay.runSync() };
}

/**
 * Replays `spec` on `workload` (a table given, not loaded) and returns its summary without the
 * host-time keys, and its preemptions: runs that must agree compare these.
 */
export async function summaryOfWorkload(spec: RunSpec, workload: RequestTable) {
  const run = new Replay(spec, workload, await createRoleTimings(spec.engine), {
    capturePerRequest: false,
  }).runSync();
  const s: Record<string, unknown> = { ...buildSummary(run, null) };
  for (const k of ["wall_time_ms", "processed_tokens_per_s", "processed_output_tokens_per_s"]) delete s[k];
  return { s, preemptions: run.preemptions };
}
