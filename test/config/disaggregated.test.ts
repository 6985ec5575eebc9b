/** Disaggregated (P/D) engines and the KV router: defaults, resolution, the seed walkthrough. */
import { describe, expect, it } from "vitest";
import type { DisaggregatedEngineSpec, WorkerRoleSpec } from "../../src/config/runSpec.js";
import { validateConfig } from "../../src/config/schema/index.js";
import { gpuSpec } from "../../src/hardware/catalog.js";
import { defaultKvCapacityBlocks } from "../../src/model/memory.js";
import { resolveModel } from "../../src/model/resolve.js";
import {
  aggregatedRole,
  disaggregatedEngine,
  loadYaml,
  RUNNABLE_ENGINE,
  RUNNABLE_PD_ENGINE,
} from "../helpers/configHelpers.js";
import { SEED_001 } from "../helpers/seed001.js";
import { ONE_GPU } from "../helpers/specs.js";

const LLAMA_FP8 = "nvidia/Llama-3.1-8B-Instruct-FP8";

/** Default KV capacity of one TP1 worker of the seed's model at the seed's scheduler settings. */
function seedCapacityBlocks(gpu: string): number {
  return defaultKvCapacityBlocks({
    model: resolveModel(LLAMA_FP8),
    gpu: gpuSpec(gpu),
    tensor: 1,
    pipeline: 1,
    blockSize: 64,
    memoryFraction: 0.9,
    maxNumTokens: 8192,
    cudaGraphReservedBytes: 0,
  }).blocks;
}

/** The seed's role at `maxSequences`, without its timing provider (compared separately). */
function seedRole(maxSequences: number, numGpuBlocks: number): Omit<WorkerRoleSpec, "timing"> {
  return {
    ...ONE_GPU,
    maxBatchedTokens: 8192,
    maxSequences,
    asyncScheduling: true, // vLLM's default since 0.14.0
    blockSize: 64,
    prefixCaching: true,
    numGpuBlocks,
    startupSeconds: 0,
    maxModelLen: 131072,
  };
}

function expectDefaultTiming(role: WorkerRoleSpec, gpu: string): void {
  expect(role.timing.type).toBe("default");
  if (role.timing.type !== "default") return;
  expect(role.timing.model.id).toBe(LLAMA_FP8);
  expect(role.timing.gpu.id).toBe(gpu);
  expect(role.timing.perfDatabase).toBeNull();
}

describe("seed 001: planner walkthrough, disaggregated step (without the planner)", () => {
  const files = { [SEED_001.trace]: "" };

  it("loads and resolves to the expected DisaggregatedEngineSpec", () => {
    const spec = loadYaml(SEED_001.traffic + SEED_001.disaggregatedEngine + SEED_001.routerAndSla, {
      files,
    });
    const engine = disaggregatedEngine(spec);
    const blocks = seedCapacityBlocks("h200_sxm");
    // Llama-3.1-8B at 0.9 of an H200 leaves room for several thousand 64-token FP8 blocks.
    expect(blocks).toBeGreaterThan(10000);
    const { prefill, decode, ...rest } = engine;
    expect(rest).toEqual({
      mode: "disaggregated",
      model: LLAMA_FP8,
      hardware: "h200_sxm",
      backend: "vllm",
      // FP8 KV at TP1: 2 (K, V) · 32 layers · 8 KV heads · 128 head dim · 1 byte.
      kvTransfer: {
        bytesPerToken: 2 * 32 * 8 * 128 * 1,
        bandwidthGBps: 400,
        timingMode: "destination_missing",
      },
    } satisfies Omit<DisaggregatedEngineSpec, "prefill" | "decode">);
    expect(rest.kvTransfer.bytesPerToken).toBe(65536);
    expect(prefill).toMatchObject(seedRole(64, blocks));
    expect(decode).toMatchObject(seedRole(256, blocks));
    expectDefaultTiming(prefill, "h200_sxm");
    expectDefaultTiming(decode, "h200_sxm");

    expect(spec.router).toEqual({ policy: "round_robin" });
    expect(spec.sla).toEqual({ ttftMs: 1500, itlMs: 50, e2eMs: null });
    expect(spec.source).toMatchObject({ type: "trace", format: "mooncake", blockSize: 512 });
    expect(spec.load).toEqual({ type: "trace_timestamps", speedup: 1 });
    expect(spec.stop).toEqual({ requests: null, maxVirtualTimeMs: 3_600_000 });
  });

  it("each P/D role gets the KV capacity an aggregated worker with the same settings gets", () => {
    const aggregated = aggregatedRole(
      loadYaml(SEED_001.traffic + SEED_001.aggregatedEngine + SEED_001.routerAndSla, { files }),
    );
    const engine = disaggregatedEngine(
      loadYaml(SEED_001.traffic + SEED_001.disaggregatedEngine + SEED_001.routerAndSla, { files }),
    );
    expect(aggregated.replicas).toBe(2);
    expect(engine.prefill.numGpuBlocks).toBe(aggregated.numGpuBlocks);
    expect(engine.decode.numGpuBlocks).toBe(aggregated.numGpuBlocks);
  });

  it("the --stack engine accepts the disaggregated engine without the router section", () => {
    const spec = loadYaml(SEED_001.traffic + SEED_001.disaggregatedEngine, { files, stack: "engine" });
    expect(spec.engine.mode).toBe("disaggregated");
    expect(spec.router).toEqual({ policy: "round_robin" });
  });
});

describe("disaggregated engine", () => {
  it("expands a minimal P/D block with the reference's role defaults", () => {
    const result = validateConfig(
      {
        engine: {
          mode: "disaggregated",
          model: "Qwen/Qwen3-8B",
          hardware: "h200_sxm",
          workers: { prefill: {}, decode: {} },
        },
      },
      "dynamo",
    );
    if (!result.ok) throw new Error(JSON.stringify(result.issues));
    const { engine } = result.config;
    if (engine.mode !== "disaggregated") throw new Error(`mode ${engine.mode}`);
    expect(engine.kv_transfer).toEqual({
      bytes_per_token: "auto",
      bandwidth_gb_per_second: null,
      timing_mode: "destination_missing",
    });
    // A prefill worker admits one sequence at a time by default; decode batches like aggregated.
    expect(engine.workers.prefill.scheduler.max_sequences).toBe(1);
    expect(engine.workers.decode.scheduler.max_sequences).toBe(256);
    expect(engine.workers.prefill.kv_cache.block_size).toBe(64);
    expect(engine.workers.prefill.hardware).toBeUndefined();
  });

  it("resolves the runnable P/D engine; kv_transfer defaults to auto bytes and no delay", () => {
    const engine = disaggregatedEngine(loadYaml(RUNNABLE_PD_ENGINE));
    expect(engine.prefill.maxSequences).toBe(1);
    expect(engine.decode.maxSequences).toBe(256);
    expect([engine.prefill.numGpuBlocks, engine.decode.numGpuBlocks]).toEqual([1000, 2000]);
    expect(engine.prefill.timing).toEqual({ type: "polynomial" });
    // Qwen3-8B BF16 KV at TP1: 2 · 36 layers · 8 KV heads · 128 · 2 bytes.
    expect(engine.kvTransfer).toEqual({
      bytesPerToken: 2 * 36 * 8 * 128 * 2,
      bandwidthGBps: null,
      timingMode: "destination_missing",
    });
    expect(engine.prefill.maxModelLen).toBe(40960);
    expect(engine.decode.maxModelLen).toBe(40960);
  });

  it("auto bytes_per_token follows the prefill role's tensor parallelism", () => {
    const engine = disaggregatedEngine(
      loadYaml(RUNNABLE_PD_ENGINE, {
        sets: [
          "engine.model=nvidia/Llama-3.1-8B-Instruct-FP8",
          "engine.workers.prefill.parallelism.tensor=2",
        ],
      }),
    );
    expect(engine.prefill.gpusPerWorker).toBe(2);
    expect(engine.decode.gpusPerWorker).toBe(1);
    // 8 KV heads over TP2 = 4 per GPU: half the TP1 size.
    expect(engine.kvTransfer.bytesPerToken).toBe(65536 / 2);
  });

  it("explicit kv_transfer values", () => {
    const engine = disaggregatedEngine(
      loadYaml(RUNNABLE_PD_ENGINE, {
        sets: [
          "engine.kv_transfer={bytes_per_token: 1234.5, bandwidth_gb_per_second: null, timing_mode: full_prompt}",
        ],
      }),
    );
    expect(engine.kvTransfer).toEqual({
      bytesPerToken: 1234.5,
      bandwidthGBps: null,
      timingMode: "full_prompt",
    });
  });

  it("numeric bytes_per_token works for a model fleetsim does not know", () => {
    const engine = disaggregatedEngine(
      loadYaml(RUNNABLE_PD_ENGINE, {
        sets: [
          "engine.model=acme/unknown-7b",
          "engine.context_length=4096",
          "engine.kv_transfer.bytes_per_token=4096",
        ],
      }),
    );
    expect(engine.kvTransfer.bytesPerToken).toBe(4096);
    expect(engine.decode.maxModelLen).toBe(4096);
  });

  it("per-role hardware: each role's timing and default capacity use its own GPU", () => {
    const engine = disaggregatedEngine(
      loadYaml(`${SEED_001.disaggregatedEngine}`, {
        sets: ["engine.workers.prefill.hardware=b200_sxm", "engine.workers.decode.hardware=h200_sxm"],
      }),
    );
    expect(engine.hardware).toBe("h200_sxm");
    expectDefaultTiming(engine.prefill, "b200_sxm");
    expectDefaultTiming(engine.decode, "h200_sxm");
    expect(engine.prefill.numGpuBlocks).toBe(seedCapacityBlocks("b200_sxm"));
    expect(engine.decode.numGpuBlocks).toBe(seedCapacityBlocks("h200_sxm"));
    // The B200 has more memory than the H200, so more room for KV.
    expect(engine.prefill.numGpuBlocks).toBeGreaterThan(engine.decode.numGpuBlocks);
  });

  it("a role without hardware falls back to engine.hardware", () => {
    const engine = disaggregatedEngine(
      loadYaml(SEED_001.disaggregatedEngine, {
        sets: ["engine.hardware=b200_sxm", "engine.workers.decode.hardware=h200_sxm"],
      }),
    );
    expectDefaultTiming(engine.prefill, "b200_sxm");
    expectDefaultTiming(engine.decode, "h200_sxm");
  });
});

describe("router", () => {
  it("kv_router fills Dynamo's defaults", () => {
    const spec = loadYaml(`router: {policy: kv_router}\n${RUNNABLE_ENGINE}`);
    expect(spec.router).toEqual({
      policy: "kv_router",
      overlapScoreCredit: 1,
      prefillLoadScale: 1,
      temperature: 0,
      prefillLoadModel: "none",
    });
  });

  it("kv_router takes explicit knobs, including the range bounds", () => {
    const spec = loadYaml(
      "router:\n  policy: kv_router\n  overlap_score_credit: 0\n  prefill_load_scale: 0\n  temperature: 0.5\n" +
        `  prefill_load_model: {type: aic}\n${RUNNABLE_PD_ENGINE}`,
    );
    expect(spec.router).toEqual({
      policy: "kv_router",
      overlapScoreCredit: 0,
      prefillLoadScale: 0,
      temperature: 0.5,
      prefillLoadModel: "aic",
    });
    const upper = loadYaml(
      `router: {policy: kv_router, overlap_score_credit: 1, prefill_load_scale: 32}\n${RUNNABLE_ENGINE}`,
    );
    expect(upper.router).toMatchObject({ overlapScoreCredit: 1, prefillLoadScale: 32 });
  });

  it("round_robin is valid in both modes", () => {
    expect(loadYaml(`router: {policy: round_robin}\n${RUNNABLE_ENGINE}`).router).toEqual({
      policy: "round_robin",
    });
    expect(loadYaml(`router: {policy: round_robin}\n${RUNNABLE_PD_ENGINE}`).router).toEqual({
      policy: "round_robin",
    });
  });
});
