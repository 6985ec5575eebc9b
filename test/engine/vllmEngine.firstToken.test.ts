import { describe, expect, it } from "vitest";
import { buildSummary } from "../../src/metrics/summary.js";
import { loadWorkload } from "../../src/pipeline/index.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import { buildPerRequest } from "../../src/report/perRequest.js";
import { Replay } from "../../src/sim/replay.js";
import { aggregatedRole, loadError, loadYaml, RUNNABLE_ENGINE } from "../helpers/configHelpers.js";
import { traceSpec, writeTrace } from "../helpers/specs.js";

// A arrives at 0 (8 tokens, 3 out); B at 5 ms (4 tokens, 1 out); one worker, fixed 10 ms prefill / 2 ms decode.
const ROWS = [
  { timestamp: 1000, input_length: 8, output_length: 3, hash_ids: [1, 2] },
  { timestamp: 1005, input_length: 4, output_length: 1, hash_ids: [3] },
];

async function tokenTimes(firstTokenAtPrefill: boolean) {
  const timing = { type: "fixed" as const, prefillMs: 10, decodeMs: 2 };
  const role = firstTokenAtPrefill ? { timing, firstTokenAtPrefill: true as const } : { timing };
  const spec = traceSpec(writeTrace(ROWS), { role });
  const result = new Replay(spec, await loadWorkload(spec), await createRoleTimings(spec.engine), {
    capturePerRequest: true,
  }).runSync();
  const records = buildPerRequest(result).map((r) => [r.first_token_ms, r.last_token_ms]);
  return { records, summary: buildSummary(result, null) };
}

describe("timing.first_token (vLLM core)", () => {
  it("decode_step (default): the prompt-completing request is one more decode row of its pass", async () => {
    // Pass 1 [0,12): A's prefill + a decode step for A. Pass 2 [12,24): A decodes, B prefills.
    const { records, summary } = await tokenTimes(false);
    expect(records).toEqual([
      [12, 26],
      [24, 24],
    ]);
    expect(summary.min_ttft_ms).toBe(12);
  });

  it("prefill: the pass is priced without it, as the reference does; its token still comes at the pass end", async () => {
    // Pass 1 [0,10): A's prefill alone (no decode half). Pass 2 [10,22): A decodes (2 ms), B's
    // prefill (10 ms) gives B its token. Pass 3 [22,24): A's last token.
    const { records, summary } = await tokenTimes(true);
    expect(records).toEqual([
      [10, 24],
      [22, 22],
    ]);
    expect([summary.min_ttft_ms, summary.max_ttft_ms, summary.duration_ms]).toEqual([10, 17, 24]);
    // The forward-pass metrics still count both requests (what the Planner observes is unchanged).
    expect(summary.total_output_tokens).toBe(4);
  });

  it("is read from the YAML, only when set, and refused on an SGLang role", () => {
    const withKey = RUNNABLE_ENGINE.replace(
      "timing: {type: polynomial}",
      "timing: {type: polynomial, first_token: prefill}",
    );
    expect(aggregatedRole(loadYaml(withKey)).firstTokenAtPrefill).toBe(true);
    expect(aggregatedRole(loadYaml(RUNNABLE_ENGINE)).firstTokenAtPrefill).toBeUndefined();
    const sglang = withKey.replace("  hardware: h200_sxm\n", "  hardware: h200_sxm\n  backend: sglang\n");
    const err = loadError(sglang);
    expect(err.format()).toContain(
      "engine.workers.aggregated.timing.first_token is only valid with engine.backend 'vllm' or 'trtllm'",
    );
  });
});
