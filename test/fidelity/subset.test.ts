/**
 * The fast subset of the fidelity benchmark (`npm run bench:fidelity`, docs/fidelity.md): the
 * held-out real-hardware runs of S3 (H200, Llama-3.1-70B FP8, vLLM 0.14.1) and S2's TP8 runs
 * (8× A100-40GB, Llama-3.3-70B, vLLM 0.8.3), a few held-out S9 rows (SGLang, TensorRT-LLM,
 * attention DP) and five fit-split S9 rows that pin AIPerf's warm-up barrier, replayed as the full
 * benchmark does. A timing or
 * scheduling change that loses fidelity fails here. The bounds are today's MAPE plus about two
 * points of headroom (docs/fidelity.md has the figures); tighten them as fidelity improves,
 * never loosen them to let a change through.
 */
import { describe, expect, it } from "vitest";
import { type Experiment, loadExperiments } from "../../bench/fidelity/experiment.js";
import { type ExperimentResult, groupScore, type MetricKey, score } from "../../bench/fidelity/score.js";
import { simulate } from "../../bench/fidelity/simulate.js";

async function run(filter: (e: Experiment) => boolean): Promise<ExperimentResult[]> {
  const out: ExperimentResult[] = [];
  for (const e of loadExperiments().filter(filter)) out.push(score(e, await simulate(e)));
  return out;
}

function expectMape(results: readonly ExperimentResult[], bounds: Partial<Record<MetricKey, number>>): void {
  const g = groupScore("subset", results);
  for (const [key, bound] of Object.entries(bounds) as [MetricKey, number][]) {
    expect(g.mape[key], `${key} MAPE`).not.toBeNull();
    expect(g.mape[key]!, `${key} MAPE over ${results.map((r) => r.id).join(", ")}`).toBeLessThanOrEqual(
      bound,
    );
  }
}

/**
 * The experiments whose id starts with `prefix`: there are `count` of them, none failed a request
 * or collapsed, and their group MAPE is within `bounds`.
 */
async function expectRows(
  prefix: string,
  count: number,
  bounds: Partial<Record<MetricKey, number>>,
): Promise<void> {
  const results = await run((e) => e.id.startsWith(prefix));
  expect(results).toHaveLength(count);
  expect(results.every((r) => r.predicted.failed === 0 && !r.collapsed)).toBe(true);
  expectMape(results, bounds);
}

describe("fidelity benchmark, fast held-out subset", () => {
  it("the committed experiments are well formed and the split holds S2, S3, Mixtral-8x22B, S9's H200 rows, DeepSeek and TensorRT-LLM out", () => {
    const all = loadExperiments();
    expect(all.length).toBeGreaterThanOrEqual(24);
    for (const e of all) {
      const heldOut =
        e.source.name === "S2" ||
        e.source.name === "S3" ||
        e.family === "mixtral-8x22b" ||
        (e.source.name === "S9" && e.gpu === "h200_sxm") ||
        e.kind === "mla" ||
        e.servingEngine === "trtllm";
      expect(e.split, e.id).toBe(heldOut ? "heldout" : "fit");
      // S9's SGLang rows are labelled as such and are only DeepSeek (no vLLM row of the family).
      expect(e.source.name === "S9-sglang", e.id).toBe(e.servingEngine === "sglang");
      if (e.servingEngine === "sglang") expect(e.kind, e.id).toBe("mla");
      expect(e.source.name === "S9-trtllm", e.id).toBe(e.servingEngine === "trtllm");
    }
  });

  it("S3 (H200, vLLM 0.14.1, async scheduling, warm prefix cache): TTFT, ITL, E2E and throughput", async () => {
    const results = await run((e) => e.source.name === "S3");
    expect(results).toHaveLength(8);
    expect(results.filter((r) => r.collapsed)).toEqual([]);
    expectMape(results, {
      ttftMeanMs: 4,
      ttftP99Ms: 5,
      itlMeanMs: 12,
      e2eMeanMs: 12,
      outputThroughputTokS: 3,
    });
  }, 60_000);

  it("S2 TP8 (8× A100-40GB, vLLM 0.8.3): ITL, E2E and throughput", async () => {
    const results = await run((e) => e.source.name === "S2" && e.parallelism.tensor === 8);
    expect(results).toHaveLength(4);
    expect(results.filter((r) => r.collapsed)).toEqual([]);
    expectMape(results, { itlMeanMs: 6.5, e2eMeanMs: 6, outputThroughputTokS: 3.5, ttftMeanMs: 26 });
  }, 60_000);

  it("DeepSeek-V3 FP8 on 8× H200 at ISL/OSL 1024/1024 (SGLang 0.5.9, through the SGLang core): no collapse, no worse than today", async () => {
    // Since 2026-12-04 SGLang's block-FP8 linear layers are priced as DeepGEMM (the per-tensor FP8
    // cells, docs/models.md "Block-scaled FP8 GEMMs"): ITL MAPE 103 → 7.3 % on these five rows;
    // TTFT 27.1 → 36.7 %, predicted low (the slow GEMM cells had hidden part of that); 36.7 →
    // 29.9 % with AIPerf's warm-up barrier (docs/traffic.md "Warm-up phase"). Bounds: today + ~2.
    const results = await run((e) => e.id.startsWith("s9sgl-h200-deepseek-v3-fp8-tp8-isl1024-osl1024-"));
    expect(results).toHaveLength(5);
    expect(results.filter((r) => r.collapsed)).toEqual([]);
    for (const r of results) expect(r.predicted.failed, r.id).toBe(0);
    expectMape(results, { ttftMeanMs: 32, itlMeanMs: 9.5 });
  }, 60_000);

  it("DeepSeek-V3 FP8 on 8× B200 at ISL/OSL 1024/1024 (SGLang 0.5.9): ITL within the measured TPOT's reach", async () => {
    // The B200 fp8_block cells are the slowest of the tables (~230 µs per call at decode sizes):
    // priced from them ITL was 3.2–6.7× the measured TPOT; as DeepGEMM, 6.2 % MAPE today.
    const results = await run((e) => e.id.startsWith("s9sgl-b200-deepseek-v3-fp8-tp8-isl1024-osl1024-"));
    expect(results).toHaveLength(5);
    expect(results.filter((r) => r.collapsed)).toEqual([]);
    for (const r of results) expect(r.predicted.failed, r.id).toBe(0);
    expectMape(results, { itlMeanMs: 8.5 });
  }, 60_000);

  it("Llama-3.1-8B BF16 on H100 TP1 at ISL/OSL 1024/512 (TensorRT-LLM 1.0.0rc3, through backend trtllm): ITL", async () => {
    // Cross-engine rows (S9-trtllm): the vLLM core under GUARANTEED_NO_EVICT, no chunked prefill or
    // block reuse, the overlap scheduler as async scheduling. ITL 2.4 % MAPE today; TTFT is low
    // (docs/fidelity.md), so it is not bounded here yet.
    await expectRows("s9trt-h100-llama31-8b-bf16-tp1-isl1024-osl512-", 5, { itlMeanMs: 4.5 });
  }, 60_000);

  it("Qwen3-235B-A22B FP8 on H200 under attention DP 2 (vLLM 0.12.0, MoE TP over the DP × TP GPUs): no collapse, no worse than today", async () => {
    await expectRows("s9-h200-qwen3-235b-a22b-fp8-tp1dp2-isl2000-", 4, { ttftMeanMs: 79.5, itlMeanMs: 49 });
  }, 60_000);

  it("S9's Qwen3-32B BF16 on H100 TP4 at ISL/OSL 4096/1024 (fit split, closed loop c = 8…128): TTFT with AIPerf's warm-up barrier", async () => {
    // AIPerf waits for every warm-up response before its profiling phase, so the measured requests
    // start as one burst of c (traffic.load.warmup_sessions). Replayed as one continuous closed loop
    // instead, the burst is missing and TTFT MAPE is ~72 % (predicted flat in c); with the barrier
    // 51.8 % today. The rest of the gap is open (docs/fidelity.md). Bounds: today + ~2.
    await expectRows("s9-h100-qwen3-32b-bf16-tp4-isl4096-osl1024-", 5, { ttftMeanMs: 54, itlMeanMs: 7.5 });
  }, 60_000);

  it("Qwen3-235B-A22B FP8 on H100 TP4 × EP4 (TensorRT-LLM 1.0.0rc3): block-FP8 linear layers at per-tensor speed", async () => {
    // TRT-LLM's block-scale GEMMs run at the per-tensor FP8 cells' speed (AIConfigurator's TRT-LLM
    // GEMM tables, docs/models.md "Block-scaled FP8 GEMMs"); priced from the vLLM tables'
    // fp8_block cells these rows were 1.4–1.9× slow (ITL MAPE 65.4 %), now 7.7 %. Bounds: today + ~2.
    await expectRows("s9trt-h100-qwen3-235b-a22b-fp8-tp4ep4-", 6, { itlMeanMs: 10, ttftMeanMs: 12.5 });
  }, 60_000);
});
