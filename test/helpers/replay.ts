import type { RunSpec } from "../../src/config/runSpec.js";
import { loadWorkload } from "../../src/pipeline/index.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import { Replay } from "../../src/sim/replay.js";

/** Replays `spec` in process (per-request capture on unless told), to the end. */
export async function runReplay(spec: RunSpec, capture = true) {
  const table = await loadWorkload(spec);
  const replay = new Replay(spec, table, await createRoleTimings(spec.engine), {
    capturePerRequest: capture,
  });
  return { replay, result: replay.runSync() };
}
