/**
 * `engine.backend` in config resolution (config/backends.ts, docs/backends.md): each backend's
 * defaults (block size, memory fraction and its formula, context length `max`) and settings.
 */
import { describe, expect, it } from "vitest";
import {
  aggregatedRole,
  disaggregatedEngine,
  loadYaml,
  RUNNABLE_PD_ENGINE,
} from "../helpers/configHelpers.js";
import { engineYaml } from "../helpers/configYaml.js";

const ROLE = "engine.workers.aggregated";
/** Default capacity and timing on a real GPU and model (the memory formulas apply). */
const DEFAULT_CAPACITY = engineYaml({
  model: "Qwen/Qwen3-8B",
  contextLength: null,
  timing: "{type: polynomial}",
});

const role = (...sets: string[]) => aggregatedRole(loadYaml(DEFAULT_CAPACITY, { sets }));

describe("backend defaults", () => {
  it("vLLM: block 64, memory fraction 0.9 of total memory, the model's context length; specs unchanged", () => {
    const r = role();
    expect(r.blockSize).toBe(64);
    expect(r.maxModelLen).toBe(40960);
    expect(r.backend).toBeUndefined();
    expect(r.capacityPolicy).toBeUndefined();
    expect(r.sglang).toBeUndefined();
  });

  it("TRT-LLM: block 32, GUARANTEED_NO_EVICT, 0.9 of the free memory (more KV than vLLM's rule), no context limit", () => {
    const v = role();
    const t = role("engine.backend=trtllm");
    expect(t.blockSize).toBe(32);
    expect(t.backend).toBe("trtllm");
    expect(t.capacityPolicy).toBe("guaranteed_no_evict");
    expect(t.maxModelLen).toBeNull();
    // (capacity − non_kv)·f exceeds capacity·f − non_kv by (1 − f)·non_kv.
    const vTokens = v.numGpuBlocks * v.blockSize;
    const tTokens = t.numGpuBlocks * t.blockSize;
    expect(tTokens).toBeGreaterThan(vTokens);
    // The same rule with vLLM's block size: the blocks scale with the block size.
    const t64 = role("engine.backend=trtllm", `${ROLE}.kv_cache.block_size=64`);
    expect(Math.abs(t64.numGpuBlocks * 64 - tTokens)).toBeLessThan(64);
    expect(
      role("engine.backend=trtllm", `${ROLE}.scheduler.capacity_scheduler_policy=MAX_UTILIZATION`)
        .capacityPolicy,
    ).toBe("max_utilization");
  });

  it("SGLang: page 1, memory fraction 0.88, its settings with the reference's defaults", () => {
    const s = role("engine.backend=sglang");
    expect(s.blockSize).toBe(1);
    expect(s.backend).toBe("sglang");
    expect(s.maxModelLen).toBeNull();
    expect(s.sglang).toEqual({
      schedulePolicy: "fifo",
      maxPrefillTokens: 16384,
      chunkedPrefillSize: 8192,
      clipMaxNewTokens: 4096,
      scheduleConservativeness: 1,
      newTokenRatioFactor: 0.7,
      enableMixedChunk: false,
    });
    expect(
      role("engine.backend=sglang", `${ROLE}.sglang={enable_mixed_chunk: true}`).sglang?.enableMixedChunk,
    ).toBe(true);
    // prefill_decode_interval reaches the role only when set (0 = off keeps the spec as it was).
    expect(Object.hasOwn(s, "prefillDecodeInterval")).toBe(false);
    expect(
      role("engine.backend=sglang", `${ROLE}.scheduler.prefill_decode_interval=3`).prefillDecodeInterval,
    ).toBe(3);
    // Under attention DP: 8192 / DP per chunk, output reserved at 0.3 × conservativeness.
    const dp = role("engine.backend=sglang", `${ROLE}.parallelism.attention_data=2`);
    expect(dp.sglang?.chunkedPrefillSize).toBe(4096);
    expect(dp.sglang?.newTokenRatioFactor).toBe(0.3);
    const paged = role("engine.backend=sglang", `${ROLE}.sglang={page_size: 16, schedule_policy: fcfs}`);
    expect(paged.blockSize).toBe(16);
    expect(paged.sglang?.schedulePolicy).toBe("fifo");
    // 0.88 of what is left after the resident overheads, minus the weights: fewer tokens than vLLM's 0.9.
    const v = role();
    expect(s.numGpuBlocks).toBeLessThan(v.numGpuBlocks * v.blockSize);
    expect(s.numGpuBlocks).toBeGreaterThan(0);
  });

  it("a numeric context length applies to every backend", () => {
    expect(role("engine.backend=trtllm", "engine.context_length=4096").maxModelLen).toBe(4096);
  });

  it("SGLang disaggregated: both roles get the backend's block size", () => {
    const e = disaggregatedEngine(loadYaml(RUNNABLE_PD_ENGINE, { sets: ["engine.backend=sglang"] }));
    expect(e.prefill.blockSize).toBe(1);
    expect(e.decode.blockSize).toBe(1);
    expect(e.decode.sglang?.chunkedPrefillSize).toBe(8192);
  });
});
