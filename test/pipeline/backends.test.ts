/**
 * `engine.backend` on the bundled example configs (docs/backends.md): each backend runs them with
 * `--set engine.backend=…`, and the results differ where the schedulers do.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { runPrediction } from "../../src/pipeline/run.js";

const EXAMPLE = fileURLToPath(new URL("../../examples/aggregated.yaml", import.meta.url));
const ROLE = "engine.workers.aggregated";
/** A cache small enough, and arrivals dense enough, that vLLM preempts on the example trace. */
const SMALL_CACHE = [`${ROLE}.kv_cache.capacity={type: fixed, blocks: 160}`, "traffic.load.speedup=20"];

/** The summary without its host-time keys (wall time and what is divided by it). */
function simulated(summary: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const host = new Set(["wall_time_ms", "processed_tokens_per_s", "processed_output_tokens_per_s"]);
  return Object.fromEntries(Object.entries(summary).filter(([k]) => !host.has(k)));
}

async function run(...sets: string[]) {
  const warnings: string[] = [];
  const spec = loadConfig({ configPath: EXAMPLE, sets, stack: "engine" });
  const outcome = await runPrediction(spec, { capturePerRequest: false }, { warn: (l) => warnings.push(l) });
  return { ...outcome, warnings };
}

describe("engine.backend on examples/aggregated.yaml", () => {
  it("TRT-LLM never preempts where vLLM does, and completes every request", async () => {
    // vLLM's synchronous scheduler, as TRT-LLM's here (vLLM ≥ 0.14 defaults to async scheduling),
    // and its passes priced at their own token count, as TRT-LLM's are (no CUDA-graph padding).
    const vllm = await run(
      ...SMALL_CACHE,
      `${ROLE}.scheduler.async_scheduling=false`,
      `${ROLE}.timing.cuda_graph_padding=false`,
    );
    const trt = await run(...SMALL_CACHE, "engine.backend=trtllm");
    expect(vllm.result.preemptions).toBeGreaterThan(0);
    expect(trt.result.preemptions).toBe(0);
    const s = trt.prediction.summary as unknown as Record<string, number>;
    expect(s["completed_requests"]).toBe(vllm.prediction.summary["completed_requests"]);
    // MAX_UTILIZATION packs like vLLM: the same run.
    const maxUtil = await run(
      ...SMALL_CACHE,
      "engine.backend=trtllm",
      `${ROLE}.scheduler.capacity_scheduler_policy=MAX_UTILIZATION`,
    );
    expect(maxUtil.result.preemptions).toBe(vllm.result.preemptions);
    expect(simulated(maxUtil.prediction.summary)).toEqual(simulated(vllm.prediction.summary));
  });

  it("says a TRT-LLM run is priced from the vLLM op tables", async () => {
    const vllm = await run();
    const trt = await run("engine.backend=trtllm");
    expect(vllm.warnings.some((w) => w.includes("vLLM op tables"))).toBe(false);
    expect(
      trt.warnings.some((w) => w.includes("engine.backend 'trtllm'") && w.includes("vLLM op tables")),
    ).toBe(true);
    expect(vllm.prediction.run?.topology.aggregated?.timing_backend).toBeUndefined();
    expect(trt.prediction.run?.topology.aggregated?.timing_backend).toBe("vllm");
    expect(trt.prediction.run?.backend).toBe("trtllm");
  });
});

describe("engine.backend=sglang on examples/aggregated.yaml", () => {
  it("runs every request to completion, and differs from vLLM", async () => {
    const vllm = await run();
    const sglang = await run("engine.backend=sglang");
    const v = vllm.prediction.summary as unknown as Record<string, number>;
    const s = sglang.prediction.summary as unknown as Record<string, number>;
    expect(s["completed_requests"]).toBe(v["completed_requests"]);
    expect(s["total_output_tokens"]).toBe(v["total_output_tokens"]);
    // Extend passes keep decode out of prefill passes: the token gaps differ from vLLM's mixed batches.
    expect(s["max_itl_ms"]).not.toBe(v["max_itl_ms"]);
    expect(sglang.prediction.run?.topology.aggregated?.timing_backend).toBe("vllm");
    expect(sglang.warnings.some((w) => w.includes("engine.backend 'sglang'"))).toBe(true);
  });

  it("retracts under KV pressure and still completes every request", async () => {
    const sglang = await run(...SMALL_CACHE, "engine.backend=sglang");
    const vllm = await run(...SMALL_CACHE);
    expect(sglang.prediction.summary["completed_requests"]).toBe(
      vllm.prediction.summary["completed_requests"],
    );
    expect(sglang.result.preemptions).not.toBe(vllm.result.preemptions);
  });

  it("sglang.enable_mixed_chunk keeps decode running through prefill passes: a lower max ITL", async () => {
    const extend = await run("engine.backend=sglang");
    const mixed = await run("engine.backend=sglang", `${ROLE}.sglang={enable_mixed_chunk: true}`);
    const e = extend.prediction.summary as unknown as Record<string, number>;
    const m = mixed.prediction.summary as unknown as Record<string, number>;
    expect(m["completed_requests"]).toBe(e["completed_requests"]);
    expect(m["total_output_tokens"]).toBe(e["total_output_tokens"]);
    // A running request no longer sits out every extend pass.
    expect(m["max_itl_ms"]).toBeLessThan(e["max_itl_ms"]);
    expect(m["mean_itl_ms"]).not.toBe(e["mean_itl_ms"]);
  });

  it("with the page size 1 default (block_size unset)", async () => {
    const sglang = await run(
      "engine.backend=sglang",
      `${ROLE}.kv_cache={prefix_caching: true, capacity: {type: default}}`,
    );
    expect(sglang.prediction.run?.topology.aggregated?.block_size).toBe(1);
    expect(sglang.prediction.summary["completed_requests"]).toBe(315);
  });
});
