/**
 * The prediction.json contract (src/output/): every golden prediction parses with the strict
 * schema; the key paths the writers produce, over the golden runs (aggregated, disaggregated,
 * Planner, advisory, retune) and one run with per-request capture, are exactly the schema's
 * paths but for the documented `NOT_IN_ANY_RUN` ones; wrong, unknown and missing keys fail.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { type KnobRow, PLANNER_KNOBS } from "../../src/knobs/planner.js";
import { perRequestRecordSchema } from "../../src/output/perRequest.js";
import type { LifecycleOperation as OutputLifecycleOperation } from "../../src/output/planner.js";
import { type Prediction, predictionSchema } from "../../src/output/prediction.js";
import type { RetuneEvent } from "../../src/output/retune.js";
import { HOST_TIME_KEYS } from "../../src/output/summary.js";
import type { RetuneEventRecord } from "../../src/planner/retune/index.js";
import type { LifecycleOperation } from "../../src/sim/scaling.js";
import { GOLDEN_CASES, goldenPath, type Json } from "../golden/cases.js";
import { cli } from "../helpers/cli.js";
import { tempDir } from "../helpers/specs.js";
import { documentPaths, schemaPaths } from "./contractPaths.js";

const ROOT = join(import.meta.dirname, "..", "..");
const JSON_SCHEMA = z.toJSONSchema(predictionSchema) as { [key: string]: unknown };

/** A golden with its host-time values put back (as any run writes them), so it is a whole prediction. */
function golden(name: string): { [key: string]: Json } {
  const c = GOLDEN_CASES.find((x) => x.name === name);
  if (c === undefined) throw new Error(`no golden case ${name}`);
  const doc = JSON.parse(readFileSync(goldenPath(c), "utf8")) as { [key: string]: Json };
  const summary = doc["summary"] as { [key: string]: Json };
  for (const k of HOST_TIME_KEYS) summary[k] = 1.5;
  // An engine-stack run writes the summary's keys at the top level as well (docs/output.md "Layout").
  if ("num_requests" in doc) for (const k of HOST_TIME_KEYS) doc[k] = 1.5;
  const planner = doc["planner"] as { retune_events?: { [key: string]: Json }[] } | null;
  for (const e of planner?.retune_events ?? []) e["sweep_wall_s"] = 0.5;
  return doc;
}

/** Which golden cases are runs of which kind. */
const RUN_KINDS: Record<string, readonly string[]> = {
  aggregated: ["aggregated", "synthetic-sessions", "kv-router"],
  disaggregated: ["disaggregated-kv-transfer", "disaggregated-kv-router"],
  planner: ["seed-aggregated-planner", "seed-disaggregated-planner", "seed-aggregated-advisory"],
  retune: ["retune-router"],
  speculation: ["aggregated-speculation"],
};

/** Paths every run of a kind writes (beyond what the schema requires of every run). */
const KIND_PATHS: Record<string, readonly string[]> = {
  aggregated: ["run.topology.aggregated.kv_blocks", "timeseries.active_workers.aggregated"],
  disaggregated: [
    "run.topology.prefill.kv_blocks",
    "run.topology.decode.kv_blocks",
    "timeseries.active_workers.prefill",
  ],
  planner: [
    "planner.metadata.planner_config.load_predictor",
    "planner.ticks[].input.traffic.isl",
    "planner.ticks[].effects.diagnostics.load_decision_reason",
    "planner.ticks[].topology.decode.active_count",
    "run.planner.max_num_gpus",
  ],
  speculation: ["run.speculation.acceptance_rates", "summary.spec_decode_mean_acceptance_length"],
  retune: [
    "planner.retune_events[].top[][0].router.*",
    "planner.ticks[].router_policies[].parameters.*",
    "planner.ticks[].runtime_decision.router_parameters.*.*",
    "run.planner.retune.objective",
  ],
};

/**
 * Schema paths no golden run writes and the per-request run does not either: options no case sets
 * (`client:`, an `e2e_ms` SLA, concurrency/rate/staged loads), retune paths that need a failed
 * candidate, an applied Planner change, a predictor pre-sweep (`retune.predictors`) or
 * `retune.planner`. A new schema key must be written by a golden run or be listed here.
 */
/** The keys of one role's `--detail memory` estimate (src/output/details.ts). */
const ROLE_MEMORY_FIELDS = [
  "estimated_num_gpu_blocks",
  "kv_size_per_token_bytes",
  "kvcache_quant_mode",
  "memory_breakdown",
  "memory_breakdown.activations_bytes",
  "memory_breakdown.comm_overhead_bytes",
  "memory_breakdown.cuda_graph_reserved_bytes",
  "memory_breakdown.runtime_overhead_bytes",
  "memory_breakdown.weights_bytes",
  "scheduler_block_size_tokens",
  "scope",
  "source",
  "stage",
  "status",
  "tolerance_adjusted",
  "total_gpu_capacity_bytes",
  "total_kv_size_bytes",
  "total_kv_size_tokens",
  "unavailable_reason",
];

const NOT_IN_ANY_RUN = [
  // Only with --detail memory on the engine stack (memory_diagnostics), or a role without an
  // estimate beside one with it (test/cli/detail.test.ts checks both against the schema).
  "details.sections.memory.roles.*.unavailable_reason",
  "memory_diagnostics",
  "memory_diagnostics.*",
  ...ROLE_MEMORY_FIELDS.map((f) => `memory_diagnostics.*.${f}`),
  // Present only with kv_cache.host_offload / g3_offload (test/cli/offload.test.ts checks their keys).
  "g3_offload",
  "g3_offload.cross_worker_read_blocks",
  "g3_offload.evictions",
  "g3_offload.g3_blocks_per_tier",
  "g3_offload.lookup_hits",
  "g3_offload.lookup_pending",
  "g3_offload.lookup_probes",
  "g3_offload.pending_blocks",
  "g3_offload.read",
  "g3_offload.read.cancelled_jobs",
  "g3_offload.read.completed_bytes",
  "g3_offload.read.completed_jobs",
  "g3_offload.read.submitted_jobs",
  "g3_offload.read.transfer_ms",
  "g3_offload.resident_blocks",
  "g3_offload.scope",
  "g3_offload.tiers",
  "g3_offload.write",
  "g3_offload.write.cancelled_jobs",
  "g3_offload.write.completed_bytes",
  "g3_offload.write.completed_jobs",
  "g3_offload.write.submitted_jobs",
  "g3_offload.write.transfer_ms",
  "kv_offload",
  "kv_offload.evicted_blocks",
  "kv_offload.host_blocks_per_tier",
  "kv_offload.loaded_blocks",
  "kv_offload.loaded_bytes_per_gpu",
  "kv_offload.loaded_tokens",
  "kv_offload.loads",
  "kv_offload.mean_load_ms",
  "kv_offload.resident_blocks",
  "kv_offload.scope",
  "kv_offload.stored_blocks",
  "kv_offload.tiers",
  "planner.retune_events[].failed_candidates[][0].planner",
  "planner.retune_events[].failed_candidates[][0].planner.*",
  "planner.retune_events[].failed_candidates[][0].router",
  "planner.retune_events[].failed_candidates[][0].router.*",
  "planner.retune_events[].planner_changes.*",
  "planner.retune_events[].predictor_presweep.eval_steps",
  "planner.retune_events[].predictor_presweep.fields",
  "planner.retune_events[].predictor_presweep.fields.*",
  "planner.retune_events[].predictor_presweep.losses",
  "planner.retune_events[].predictor_presweep.losses.*",
  "planner.retune_events[].predictor_presweep.wall_s",
  "planner.retune_events[].predictor_presweep.warmup_steps",
  "planner.retune_events[].predictor_presweep.winner",
  "planner.ticks[].retune_planner_fields",
  "planner.ticks[].retune_planner_fields.*",
  "run.client",
  // Only with client.profile (test/calibrate/calibrate.test.ts checks the run block then).
  "run.client.profile",
  "run.client.request_ms",
  "run.client.response_ms",
  "run.client.timeout_seconds",
  "run.sla.e2e_ms",
  // Only for a backend priced from another backend's tables (sglang, trtllm; docs/backends.md).
  "run.topology.aggregated.timing_backend",
  "run.topology.decode.timing_backend",
  "run.topology.prefill.timing_backend",
  "run.traffic.concurrency",
  "run.traffic.requests_per_second",
  "run.traffic.stages",
  "run.traffic.warmup_sessions",
  // Planner knobs written into planner_config only when set (knob table rows `written: "notDefault"`).
  ...PLANNER_KNOBS.flatMap((row: KnobRow) =>
    row.written === "notDefault" && row.plannerConfig !== null
      ? [`planner.metadata.planner_config.${row.plannerConfig}`]
      : [],
  ),
];

/**
 * The disaggregated golden config with `--capture-per-request` and `--detail all`: prediction.json
 * and requests.jsonl.
 */
async function perRequestRun(): Promise<{ doc: unknown; lines: unknown[] }> {
  const out = join(tempDir("fleetsim-output-schema-"), "out");
  const config = join(ROOT, "test/golden/configs/disaggregated.yaml");
  const r = await cli(
    "predict",
    "-c",
    config,
    "--stack",
    "dynamo",
    "--output-dir",
    out,
    "--capture-per-request",
    "--detail",
    "all",
  );
  if (r.code !== 0) throw new Error(r.err);
  const doc = JSON.parse(readFileSync(join(out, "prediction.json"), "utf8")) as unknown;
  const lines = readFileSync(join(out, "requests.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as unknown);
  return { doc, lines };
}

describe("prediction.json contract (src/output/)", () => {
  it("every golden case is of one run kind", () => {
    expect(Object.values(RUN_KINDS).flat().sort()).toEqual(GOLDEN_CASES.map((c) => c.name).sort());
  });

  for (const c of GOLDEN_CASES) {
    it(`${c.name}: the golden parses with the strict schema`, () => {
      const r = predictionSchema.safeParse(golden(c.name));
      expect(r.success ? [] : r.error.issues).toEqual([]);
    });
  }

  for (const [kind, names] of Object.entries(RUN_KINDS)) {
    it(`${kind} runs write only schema paths, and every path they write is one`, () => {
      const allowed = schemaPaths(JSON_SCHEMA);
      for (const name of names) {
        const paths = [...documentPaths(JSON_SCHEMA, golden(name))];
        expect(paths.filter((p) => !allowed.has(p))).toEqual([]);
        for (const p of KIND_PATHS[kind]) expect(paths, `${name}: ${p}`).toContain(p);
      }
    });
  }

  it("the writers' key paths over every run equal the schema's (but NOT_IN_ANY_RUN)", async () => {
    const { doc, lines } = await perRequestRun();
    expect(predictionSchema.safeParse(doc).success).toBe(true);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(perRequestRecordSchema.safeParse(line).success).toBe(true);
    const written = new Set(documentPaths(JSON_SCHEMA, doc));
    for (const c of GOLDEN_CASES) for (const p of documentPaths(JSON_SCHEMA, golden(c.name))) written.add(p);
    const allowed = schemaPaths(JSON_SCHEMA);
    expect([...written].filter((p) => !allowed.has(p)).sort()).toEqual([]);
    expect([...allowed].filter((p) => !written.has(p)).sort()).toEqual([...NOT_IN_ANY_RUN].sort());
  });

  it("a wrong type, an unknown key and a missing key each fail, naming the JSON path", () => {
    const issues = (doc: unknown) =>
      (predictionSchema.safeParse(doc).error?.issues ?? []).map((i) => `${i.path.join(".")}: ${i.code}`);
    const base = () => golden("seed-disaggregated-planner") as unknown as Prediction;

    const wrongType = base() as unknown as { summary: { [key: string]: unknown } };
    wrongType.summary["num_requests"] = "600";
    expect(issues(wrongType)).toEqual(["summary.num_requests: invalid_type"]);

    const unknownKey = base() as unknown as { run: { [key: string]: unknown } };
    unknownKey.run["gpus"] = 2;
    expect(issues(unknownKey)).toEqual(["run: unrecognized_keys"]);

    const missing = base() as unknown as { planner: { ticks: { input: { worker_counts: object } }[] } };
    delete (missing.planner.ticks[0].input.worker_counts as Partial<Record<string, unknown>>)[
      "ready_num_decode"
    ];
    expect(issues(missing)).toEqual(["planner.ticks.0.input.worker_counts.ready_num_decode: invalid_type"]);

    const typo = base() as unknown as {
      planner: { metadata: { planner_config: { [key: string]: unknown } } };
    };
    typo.planner.metadata.planner_config["ttft_msx"] = 1;
    expect(issues(typo)).toEqual(["planner.metadata.planner_config: unrecognized_keys"]);

    const badEnum = base() as unknown as { planner: { scaling_events: { [key: string]: unknown }[] } };
    badEnum.planner.scaling_events[0]["reason"] = "scale_sideways";
    expect(issues(badEnum)).toEqual(["planner.scaling_events.0.reason: invalid_value"]);
  });

  it("an engine-stack run writes every summary key at the top level too, equal to the summary's; a Dynamo-stack run does not", () => {
    const engine = golden("aggregated");
    const summary = engine["summary"] as { [key: string]: Json };
    expect(Object.keys(summary).length).toBeGreaterThan(80);
    for (const [key, value] of Object.entries(summary)) expect(engine[key], key).toEqual(value);
    const dynamo = golden("seed-aggregated-planner");
    expect(Object.keys(dynamo).sort()).toEqual([
      "coverage",
      "per_request",
      "planner",
      "run",
      "summary",
      "timeseries",
    ]);
    const issues = (doc: unknown) =>
      (predictionSchema.safeParse(doc).error?.issues ?? []).map((i) => `${i.path.join(".")}: ${i.message}`);
    const differs = golden("aggregated");
    differs["mean_ttft_ms"] = 1e9;
    expect(issues(differs)).toEqual(["mean_ttft_ms: differs from summary.mean_ttft_ms"]);
    const partial = golden("aggregated");
    delete partial["num_requests"];
    expect(issues(partial)).toEqual(["num_requests: missing beside summary.num_requests"]);
  });

  it("the records built outside the writers (retune decisions, worker lifecycle) are the contract's types", () => {
    expectTypeOf<RetuneEventRecord>().toExtend<RetuneEvent>();
    expectTypeOf<LifecycleOperation>().toExtend<OutputLifecycleOperation>();
  });
});
