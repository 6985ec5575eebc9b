/**
 * prediction.json's `run` block (docs/metrics.md "What was simulated"): model, hardware, backend,
 * topology, router, Planner target and budget, traffic and its request count, in the file, in the
 * library API's report and in the HTML report's header. Deterministic, no absolute path.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runSyntheticTraceReplay } from "../../src/index.js";
import { renderHtmlReport } from "../../src/report/html/index.js";
import type { Prediction } from "../../src/report/prediction.js";
import { cliPredict } from "../helpers/cli.js";
import { configFile } from "../helpers/configYaml.js";
import { tempDir } from "../helpers/specs.js";

const ROWS = [
  { timestamp: 0, input_length: 700, output_length: 5, hash_ids: [1, 2] },
  { timestamp: 10, input_length: 900, output_length: 3, hash_ids: [1, 3] },
  { timestamp: 25, input_length: 300, output_length: 4, hash_ids: [4] },
  { timestamp: 40, session_id: "s", input_length: 300, output_length: 4, hash_ids: [5] },
  { session_id: "s", delay: 5, input_length: 400, output_length: 4, hash_ids: [5, 6] },
];

function project(engineYaml: string, extraYaml = "") {
  const dir = tempDir("fleetsim-run-");
  const { config } = configFile(
    `traffic:
  source: {type: trace, format: mooncake, paths: [my_trace.jsonl], block_size: 512}
  load: {type: trace_timestamps, speedup: 2}
  stop: {max_virtual_time_seconds: 3600}
${engineYaml}
${extraYaml}`,
    { dir, files: { "my_trace.jsonl": `${ROWS.map((r) => JSON.stringify(r)).join("\n")}\n` } },
  );
  return { dir, config, out: join(dir, "out") };
}

const AGGREGATED = `engine:
  model: test/model
  hardware: h200_sxm
  context_length: 8192
  workers:
    aggregated:
      parallelism: {replicas: 2, tensor: 2}
      scheduler: {max_batched_tokens: 4096, max_sequences: 32}
      kv_cache: {block_size: 64, capacity: {type: fixed, blocks: 256}}
      timing: {type: polynomial}
      startup_seconds: 30`;

const DISAGGREGATED = `engine:
  mode: disaggregated
  model: test/model
  hardware: h200_sxm
  context_length: 8192
  kv_transfer: {bytes_per_token: 1024, bandwidth_gb_per_second: 400}
  workers:
    prefill:
      parallelism: {replicas: 1, tensor: 2}
      hardware: b200_sxm
      kv_cache: {block_size: 64, capacity: {type: fixed, blocks: 512}}
      timing: {type: fixed, prefill_ms: 5, decode_ms: 1}
    decode:
      parallelism: {replicas: 2}
      kv_cache: {block_size: 64, capacity: {type: fixed, blocks: 300}}
      timing: {type: fixed, prefill_ms: 5, decode_ms: 1}
router:
  policy: kv_router
  overlap_score_credit: 0.5
  temperature: 0.25`;

async function predictRun(p: { config: string; out: string }): Promise<Prediction> {
  const r = await cliPredict(p.config, p.out);
  expect(r.err, r.err).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(readFileSync(join(p.out, "prediction.json"), "utf8"));
}

describe("prediction.json `run`: what was simulated", () => {
  it("an aggregated run: model, hardware, backend, topology, router, traffic and its request count", async () => {
    const doc = await predictRun(project(AGGREGATED));
    expect(doc.run).toEqual({
      stack: "dynamo",
      mode: "aggregated",
      model: "test/model",
      hardware: "h200_sxm",
      backend: "vllm",
      topology: {
        aggregated: {
          replicas: 2,
          tensor: 2,
          pipeline: 1,
          attention_data: 1,
          moe_tensor: 1,
          moe_expert: 1,
          gpus_per_worker: 2,
          hardware: "h200_sxm",
          hardware_data: null, // polynomial timing reads no op tables
          timing: "polynomial",
          max_batched_tokens: 4096,
          max_sequences: 32,
          block_size: 64,
          kv_blocks: 256,
          prefix_caching: true,
          startup_seconds: 30,
        },
      },
      starting_gpus: 4,
      router: { policy: "round_robin" },
      planner: null,
      traffic: {
        source: "mooncake",
        trace: "my_trace.jsonl",
        files: 1,
        requests: 5,
        sessions: 4,
        load: "trace_timestamps",
        speedup: 2,
        max_virtual_time_seconds: 3600,
      },
      sla: null,
      cost: { usd_per_gpu_hour: { h200_sxm: 3.6 } },
    });
    // Existing keys are unchanged; `run` is one more top-level key.
    expect(Object.keys(doc)).toEqual(["coverage", "per_request", "planner", "run", "summary", "timeseries"]);
    expect(doc.summary.num_requests).toBe(5);
  });

  it("a disaggregated run with the Planner: both roles, the KV router, target and budget", async () => {
    const doc = await predictRun(
      project(
        DISAGGREGATED,
        `planner: {policy: enabled, target: load, max_num_gpus: 6, prefill_min_workers: 1, decode_min_workers: 1}
evaluation:
  sla: {ttft_ms: 500, itl_ms: 40}`,
      ),
    );
    const run = doc.run as unknown as Record<string, Record<string, unknown>>;
    expect(run.mode).toBe("disaggregated");
    expect(Object.keys(run.topology)).toEqual(["decode", "prefill"]);
    expect(run.topology.prefill).toMatchObject({
      replicas: 1,
      tensor: 2,
      gpus_per_worker: 2,
      hardware: "b200_sxm",
      timing: "fixed",
      kv_blocks: 512,
    });
    expect(run.topology.decode).toMatchObject({ replicas: 2, gpus_per_worker: 1, hardware: "h200_sxm" });
    expect(run.starting_gpus).toBe(4);
    expect(run.router).toEqual({
      policy: "kv_router",
      overlap_score_credit: 0.5,
      prefill_load_scale: 1,
      temperature: 0.25,
      prefill_load_model: "none",
    });
    expect(run.planner).toEqual({
      target: "load",
      max_num_gpus: 6,
      min_num_gpus: null,
      enable_load_scaling: true,
      enable_throughput_scaling: false,
      advisory: false,
      retune: null,
    });
    expect(run.sla).toEqual({ ttft_ms: 500, itl_ms: 40 });
  });

  it("is deterministic and names the trace by file name, never by an absolute path", async () => {
    const a = project(AGGREGATED);
    const first = await predictRun(a);
    const second = await predictRun({ config: a.config, out: join(a.dir, "again") });
    expect(second.run).toEqual(first.run);
    expect(JSON.stringify(first.run)).not.toContain(a.dir);
  });

  it("the library API returns the same block (synthetic traffic: lengths, load and request count)", async () => {
    const report = await runSyntheticTraceReplay({
      inputTokens: 64,
      outputTokens: 4,
      requestCount: 12,
      requestRate: 50,
      arrivalSeed: 7,
      numWorkers: 3,
      modelName: "Qwen/Qwen3-8B",
    });
    expect(report.run.traffic).toEqual({
      source: "synthetic",
      trace: null,
      files: 0,
      input_tokens: 64,
      output_tokens: 4,
      requests: 12,
      sessions: 12,
      load: "poisson",
      requests_per_second: 50,
      seed: 7,
      max_virtual_time_seconds: null,
    });
    expect(report.run.topology.aggregated?.replicas).toBe(3);
    expect(report.run.model).toBe("Qwen/Qwen3-8B");
    expect((report.toDict() as { run: unknown }).run).toEqual(JSON.parse(JSON.stringify(report.run)));
  });

  it("the HTML report's header says what was simulated", async () => {
    const doc = await predictRun(
      project(DISAGGREGATED, "planner: {policy: enabled, target: load, max_num_gpus: 6}"),
    );
    const html = renderHtmlReport(doc);
    const fact = (label: string): string | undefined =>
      new RegExp(`<span>${label}</span><b>([^<]*)</b>`).exec(html)?.[1];
    expect(fact("Model")).toBe("test/model");
    expect(fact("Hardware")).toBe("h200_sxm");
    expect(fact("Backend")).toBe("vllm");
    expect(fact("Topology")).toBe(
      "prefill 1 × TP2 on b200_sxm, fixed timing + decode 2 × TP1, fixed timing (4 GPUs at start)",
    );
    expect(fact("Router")).toBe("kv_router (overlap credit 0.5, prefill load scale 1, temperature 0.25)");
    expect(fact("Traffic")).toBe("my_trace.jsonl (mooncake) · 5 requests");
    expect(fact("Load")).toBe("trace timestamps ÷ 2");
    expect(fact("Target")).toBe("load");
    expect(fact("GPU budget")).toBe("6 GPUs");
  });
});
