import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/errors.js";
import { loadConfig } from "../../src/config/load.js";
import { validateConfig } from "../../src/config/schema/index.js";
import {
  aggregatedRole,
  issueAt,
  loadError,
  loadYaml,
  RUNNABLE_ENGINE,
  tempDir,
} from "../helpers/configHelpers.js";
import { ONE_GPU } from "../helpers/specs.js";

const ROLE = "engine.workers.aggregated";

describe("defaults", () => {
  it("expands a minimal engine block as the reference does", () => {
    const result = validateConfig(
      { engine: { model: "Qwen/Qwen3-8B", hardware: "h200_sxm", workers: { aggregated: {} } } },
      "dynamo",
    );
    if (!result.ok) throw new Error(JSON.stringify(result.issues));
    const { engine } = result.config;
    if (engine.mode !== "aggregated") throw new Error(`mode ${engine.mode}`);
    expect(engine.backend).toBe("vllm");
    expect(engine.context_length).toBe("max");
    expect(engine.workers.aggregated).toEqual({
      parallelism: { replicas: 1, tensor: 1, pipeline: 1, attention_data: 1, moe_tensor: 1, moe_expert: 1 },
      scheduler: {
        max_batched_tokens: 8192,
        max_sequences: 256,
        prefill_schedule_interval: 1,
        prefill_decode_interval: 0,
      },
      kv_cache: {
        block_size: 64,
        prefix_caching: true,
        bytes_per_token: "auto",
        capacity: { type: "default", memory_fraction: 0.9, cuda_graph_reserved_bytes: 0 },
        host_offload: null,
        g3_offload: null,
      },
      timing: { type: "default", forward_model: "op_level", fpm_parquet_path: undefined },
      startup_seconds: 0,
    });
    expect(result.config.router).toEqual({ policy: "round_robin", prefill_load_model: { type: "none" } });
    expect(result.config.execution.resources).toEqual({
      memory_limit_gb: "auto",
      cpu_limit: "auto",
      reserve_memory_gb: 1.0,
      reserve_memory_fraction: 0.0,
      available_memory_fraction: 0.9,
      initialization_timeout_seconds: 60,
      shutdown_timeout_seconds: 5,
    });
  });

  it("omitted traffic is synthetic 1024/128, concurrency 10, 100 requests", () => {
    const spec = loadYaml(RUNNABLE_ENGINE);
    expect(spec.source).toEqual({ type: "synthetic", inputTokens: 1024, outputTokens: 128 });
    expect(spec.load).toEqual({ type: "concurrency", concurrency: 10 });
    expect(spec.stop).toEqual({ requests: 100, maxVirtualTimeMs: null });
    expect(spec.router).toEqual({ policy: "round_robin" });
    expect(spec.sla).toBeNull();
    expect(spec.stack).toBe("dynamo");
  });

  it("resolves a runnable engine into a WorkerRoleSpec", () => {
    const spec = loadYaml(RUNNABLE_ENGINE, { stack: "engine" });
    expect(spec.stack).toBe("engine");
    expect(spec.engine).toEqual({
      mode: "aggregated",
      model: "Qwen/Qwen3-8B",
      hardware: "h200_sxm",
      backend: "vllm",
      aggregated: {
        ...ONE_GPU,
        hardware: "h200_sxm",
        maxBatchedTokens: 8192,
        maxSequences: 256,
        // vLLM's default since 0.14.0 (no backend_version: today's vLLM).
        asyncScheduling: true,
        prefillScheduleInterval: 1,
        chunkedPrefill: true,
        blockSize: 64,
        prefixCaching: true,
        numGpuBlocks: 1000,
        timing: { type: "polynomial" },
        startupSeconds: 0,
        maxModelLen: 40960,
        hostOffload: null,
      },
    });
  });

  it("a supplied traffic does not merge with the default one", () => {
    const err = loadError(`traffic:\n  load: {type: concurrency, concurrency: 3}\n${RUNNABLE_ENGINE}`);
    expect(issueAt(err, "traffic.stop").message).toBe("synthetic traffic requires a stop condition");
  });

  it("fills per-type load and source defaults", () => {
    const spec = loadYaml(
      `traffic:\n  source: {input_tokens: 300}\n  load: {type: poisson, requests_per_second: 2.5}\n  stop: {requests: 7}\n${RUNNABLE_ENGINE}`,
    );
    expect(spec.source).toEqual({ type: "synthetic", inputTokens: 300, outputTokens: 128 });
    expect(spec.load).toEqual({ type: "poisson", requestsPerSecond: 2.5, seed: 42 });
    expect(spec.stop.requests).toBe(7);
  });
});

describe("resolution", () => {
  it.each([
    ["concurrency", "{type: concurrency, concurrency: 4}", 2.5, 10],
    ["rounds ties to even (2.5 → 2)", "{type: constant_rate, requests_per_second: 5}", 0.5, 2],
    ["rounds ties to even (3.5 → 4)", "{type: constant_rate, requests_per_second: 7}", 0.5, 4],
    ["at least one request", "{type: poisson, requests_per_second: 0.1}", 3, 1],
  ])("requests_per_load_unit: %s", (_name, load, perUnit, expected) => {
    const spec = loadYaml(
      `traffic:\n  load: ${load}\n  stop: {requests_per_load_unit: ${perUnit}}\n${RUNNABLE_ENGINE}`,
    );
    expect(spec.stop).toEqual({ requests: expected, maxVirtualTimeMs: null });
  });

  it("resolves a trace source relative to the config file", () => {
    const spec = loadYaml(
      `traffic:\n  source: {type: trace, paths: [traces/a.jsonl], block_size: 16}\n  load: {type: trace_timestamps}\n  stop: {max_virtual_time_seconds: 1.5}\n${RUNNABLE_ENGINE}`,
      { files: { "traces/a.jsonl": "" } },
    );
    expect(spec.source.type).toBe("trace");
    if (spec.source.type !== "trace") return;
    expect(spec.source.path.endsWith(join("traces", "a.jsonl"))).toBe(true);
    expect(spec.source.format).toBe("mooncake");
    expect(spec.source.blockSize).toBe(16);
    expect(spec.load).toEqual({ type: "trace_timestamps", speedup: 1 });
    expect(spec.stop).toEqual({ requests: null, maxVirtualTimeMs: 1500 });
  });

  it("a trace runs to its end without a stop and accepts concurrency load", () => {
    const spec = loadYaml(
      `traffic:\n  source: {type: trace, paths: [t.jsonl]}\n  load: {type: concurrency, concurrency: 3}\n${RUNNABLE_ENGINE}`,
      { files: { "t.jsonl": "" } },
    );
    expect(spec.stop).toEqual({ requests: null, maxVirtualTimeMs: null });
    expect(spec.load).toEqual({ type: "concurrency", concurrency: 3 });
  });

  it("fixed capacity in bytes becomes floor(bytes / (block_size * bytes_per_token)) blocks", () => {
    const spec = loadYaml(RUNNABLE_ENGINE, {
      sets: [
        `${ROLE}.kv_cache={block_size: 16, bytes_per_token: 131072, capacity: {type: fixed, bytes: 100000000000}}`,
      ],
    });
    expect(aggregatedRole(spec).numGpuBlocks).toBe(Math.floor(100000000000 / (16 * 131072)));
    expect(aggregatedRole(spec).blockSize).toBe(16);
  });

  it("fixed timing, tensor parallelism and a numeric context length", () => {
    const spec = loadYaml(RUNNABLE_ENGINE, {
      sets: [
        `${ROLE}.timing={type: fixed, prefill_ms: 12.5, decode_ms: 0}`,
        `${ROLE}.parallelism={replicas: 3, tensor: 4}`,
        "engine.context_length=8192",
        `${ROLE}.startup_seconds=30`,
      ],
    });
    const role = aggregatedRole(spec);
    expect(role.timing).toEqual({ type: "fixed", prefillMs: 12.5, decodeMs: 0 });
    expect([role.replicas, role.tensor, role.gpusPerWorker]).toEqual([3, 4, 4]);
    expect(role.maxModelLen).toBe(8192);
    expect(role.startupSeconds).toBe(30);
  });

  it("sla: null without thresholds, values otherwise", () => {
    expect(loadYaml(`evaluation: {sla: {}}\n${RUNNABLE_ENGINE}`).sla).toBeNull();
    expect(loadYaml(`evaluation: {}\n${RUNNABLE_ENGINE}`).sla).toBeNull();
    expect(loadYaml(`evaluation: {sla: {ttft_ms: 200, itl_ms: 20}}\n${RUNNABLE_ENGINE}`).sla).toEqual({
      ttftMs: 200,
      itlMs: 20,
      e2eMs: null,
    });
  });

  it("accepts execution.resources (host-only)", () => {
    expect(() =>
      loadYaml(
        `execution:\n  resources: {memory_limit_gb: 32, cpu_limit: 4, reserve_memory_fraction: 0.1}\n${RUNNABLE_ENGINE}`,
      ),
    ).not.toThrow();
  });
});

describe("--set", () => {
  it("parses scalars as YAML (numbers, booleans, strings with '=')", () => {
    const spec = loadYaml(RUNNABLE_ENGINE, {
      sets: [
        `${ROLE}.parallelism.replicas=4`,
        `${ROLE}.kv_cache.prefix_caching=false`,
        "engine.hardware=b200=x",
        "engine.model=nvidia/Llama-3.1-8B-Instruct-FP8",
      ],
    });
    expect(aggregatedRole(spec).replicas).toBe(4);
    expect(aggregatedRole(spec).prefixCaching).toBe(false);
    expect(spec.engine.hardware).toBe("b200=x");
    expect(aggregatedRole(spec).maxModelLen).toBe(131072);
  });

  it("replaces a whole mapping with a flow mapping", () => {
    const spec = loadYaml(
      `traffic:\n  load: {type: concurrency, concurrency: 2}\n  stop: {requests: 5}\n${RUNNABLE_ENGINE}`,
      {
        sets: ["traffic.load={type: constant_rate, requests_per_second: 8}"],
      },
    );
    expect(spec.load).toEqual({ type: "constant_rate", requestsPerSecond: 8 });
  });

  it("creates missing intermediate mappings", () => {
    const spec = loadYaml(RUNNABLE_ENGINE, { sets: ["evaluation.sla.ttft_ms=250"] });
    expect(spec.sla).toEqual({ ttftMs: 250, itlMs: null, e2eMs: null });
  });

  it("applies left to right; the last one wins", () => {
    const spec = loadYaml(RUNNABLE_ENGINE, {
      sets: [`${ROLE}.parallelism.replicas=2`, `${ROLE}.parallelism.replicas=5`],
    });
    expect(aggregatedRole(spec).replicas).toBe(5);
  });

  it("changing load.type keeps the old fields, and the error names the flag", () => {
    const err = loadError(RUNNABLE_ENGINE, { sets: ["traffic.load.type=poisson"] });
    // traffic was omitted, so --set created traffic: {load: {type: poisson}} (no default merge).
    const issue = issueAt(err, "traffic.load");
    expect(issue.message).toBe("traffic.load.type='poisson' requires requests_per_second");
    expect(issue.source).toBe("--set traffic.load.type=poisson");

    const err2 = loadError(
      `traffic:\n  load: {type: concurrency, concurrency: 4}\n  stop: {requests: 9}\n${RUNNABLE_ENGINE}`,
      {
        sets: ["traffic.load.type=poisson", "traffic.load.requests_per_second=3"],
      },
    );
    expect(issueAt(err2, "traffic.load").message).toBe(
      "traffic.load.type='poisson' does not accept ['concurrency']",
    );
  });

  it("rejects all-digit and empty path segments", () => {
    const err = loadError(RUNNABLE_ENGINE, { sets: ["traffic.source.paths.0=x.jsonl", "engine..model=x"] });
    expect(err.summary).toBe("invalid --set overrides");
    expect(issueAt(err, "traffic.source.paths.0")).toEqual({
      path: "traffic.source.paths.0",
      message: "sequence indexes are unsupported ('0')",
      source: "--set traffic.source.paths.0=x.jsonl",
    });
    expect(issueAt(err, "engine..model").message).toContain("sequence indexes are unsupported");
  });

  it("rejects crossing a scalar", () => {
    const err = loadError(RUNNABLE_ENGINE, { sets: ["engine.model.name=x"] });
    expect(issueAt(err, "engine.model.name").message).toBe(
      "cannot set engine.model.name: engine.model is string 'Qwen/Qwen3-8B', not a mapping",
    );
    expect(err.format()).toContain("(from --set engine.model.name=x)");
  });

  it("rejects a flag without '=' and an unparsable value", () => {
    const err = loadError(RUNNABLE_ENGINE, { sets: ["engine.model", "engine.model=[1,"] });
    expect(err.issues.map((i) => i.message)).toEqual([
      "expected PATH=VALUE",
      "invalid YAML value: Flow sequence must end with a ]",
    ]);
  });

  it("an unknown key set via --set names the flag", () => {
    const err = loadError(RUNNABLE_ENGINE, { sets: [`${ROLE}.foo=1`] });
    expect(issueAt(err, `${ROLE}.foo`)).toEqual({
      path: `${ROLE}.foo`,
      message: "Extra inputs are not permitted",
      source: `--set ${ROLE}.foo=1`,
    });
    expect(err.format()).toBe(
      `${err.configPath}: 1 validation error\n${ROLE}.foo\n  Extra inputs are not permitted (from --set ${ROLE}.foo=1)`,
    );
  });

  it("optimization paths are rejected for predict", () => {
    const err = loadError(RUNNABLE_ENGINE, { sets: ["optimization.target=throughput"] });
    expect(issueAt(err, "optimization").message).toBe(
      "section 'optimization' is only valid for 'recommend'; 'predict' does not accept it",
    );
  });
});

describe("source positions", () => {
  it("reports line and column of an unknown key in a nested mapping", () => {
    const yaml = [
      "engine:", // 1
      "  model: Qwen/Qwen3-8B", // 2
      "  hardware: h200_sxm", // 3
      "  workers:", // 4
      "    aggregated:", // 5
      "      timing: {type: polynomial}", // 6
      "      kv_cache:", // 7
      "        capacity: {type: fixed, blocks: 10}", // 8
      "        blok_size: 32", // 9
      "      foo: 1", // 10
      "",
    ].join("\n");
    const err = loadError(yaml);
    expect(err.issues).toEqual([
      {
        path: `${ROLE}.kv_cache.blok_size`,
        message: "Extra inputs are not permitted",
        line: 9,
        column: 9,
        hint: "did you mean 'block_size'?",
      },
      { path: `${ROLE}.foo`, message: "Extra inputs are not permitted", line: 10, column: 7 },
    ]);
    expect(err.format()).toBe(
      `${err.configPath}: 2 validation errors\n` +
        `${ROLE}.kv_cache.blok_size\n  Extra inputs are not permitted (line 9, column 9); did you mean 'block_size'?\n` +
        `${ROLE}.foo\n  Extra inputs are not permitted (line 10, column 7)`,
    );
  });

  it("points value errors at the value, in flow mappings too", () => {
    const yaml = `traffic:\n  load: {type: concurrency, concurrency: "8"}\n  stop: {requests: 3}\n${RUNNABLE_ENGINE}`;
    const issue = issueAt(loadError(yaml), "traffic.load.concurrency");
    expect(issue).toMatchObject({
      message: "Input should be a valid integer, got string '8'",
      line: 2,
      column: 42,
    });
  });

  it("points a missing required key at the enclosing mapping", () => {
    const err = loadError("engine:\n  hardware: h200_sxm\n  workers: {aggregated: {}}\n");
    expect(issueAt(err, "engine.model")).toEqual({
      path: "engine.model",
      message: "Field required",
      line: 2,
      column: 3,
    });
  });

  it("points resolver issues at the value that caused them", () => {
    const err = loadError(
      "engine:\n  model: Qwen/Qwen3-8B\n  hardware: tpu_v9\n  workers:\n    aggregated: {}\n",
    );
    expect(issueAt(err, "engine.hardware")).toMatchObject({ line: 3, column: 13 });
  });

  it("resolves the minimal engine block with the default timing model and KV capacity", () => {
    const spec = loadYaml(
      "engine:\n  model: Qwen/Qwen3-8B\n  hardware: h200_sxm\n  workers:\n    aggregated: {}\n",
    );
    const role = aggregatedRole(spec);
    expect(role.timing.type).toBe("default");
    if (role.timing.type === "default") {
      expect(role.timing.model.numLayers).toBe(36);
      expect(role.timing.gpu.id).toBe("h200_sxm");
      expect(role.timing.perfDatabase).toBeNull();
    }
    // Qwen3-8B BF16 on one H200 at memory_fraction 0.9 leaves room for several thousand 64-token blocks.
    expect(role.numGpuBlocks).toBeGreaterThan(5000);
    expect(role.maxModelLen).toBe(40960);
  });
});

describe("file and YAML errors", () => {
  it("missing file", () => {
    const path = join(tempDir(), "missing.yaml");
    try {
      loadConfig({ configPath: path, sets: [], stack: "dynamo" });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).format()).toBe(`${path}: cannot read config file\n  file not found`);
    }
  });

  it("YAML syntax error with its position", () => {
    const err = loadError("engine:\n  model: [a,\n");
    expect(err.summary).toBe("invalid YAML");
    expect(err.issues[0].line).toBeGreaterThan(0);
    expect(err.issues[0].column).toBeGreaterThan(0);
  });

  it("duplicate keys name their path and position", () => {
    const err = loadError("engine:\n  model: a\n  hardware: h\n  model: b\n");
    expect(err.issues).toEqual([
      { path: "engine.model", message: "Map keys must be unique", line: 4, column: 3 },
    ]);
  });

  it.each([
    ["- a\n- b\n", "a list"],
    ["just text\n", "a scalar"],
    ["", "an empty document"],
  ])("non-mapping top level %#", (text, what) => {
    const err = loadError(text);
    expect(err.issues[0].message).toBe(`the top level of the config must be a mapping, got ${what}`);
  });

  it("a multi-document file is rejected", () => {
    const err = loadError(`${RUNNABLE_ENGINE}---\nfoo: 1\n`);
    expect(err.summary).toBe("invalid YAML");
    expect(err.issues[0].message).toContain("multiple documents");
  });
});

describe("stacks", () => {
  it("--stack engine rejects router and planner sections", () => {
    const err = loadError(`router: {policy: round_robin}\nplanner: {policy: enabled}\n${RUNNABLE_ENGINE}`, {
      stack: "engine",
    });
    expect(issueAt(err, "router").message).toBe(
      "section 'router' is not provided by stack 'engine' (it always routes round robin); use --stack dynamo or remove it",
    );
    expect(issueAt(err, "planner").message).toBe(
      "section 'planner' is not provided by stack 'engine'; use --stack dynamo or remove it",
    );
  });

  it("--stack dynamo accepts a round_robin router", () => {
    const spec = loadYaml(
      `router: {policy: round_robin, prefill_load_model: {type: none}}\n${RUNNABLE_ENGINE}`,
    );
    expect(spec.router.policy).toBe("round_robin");
  });
});
