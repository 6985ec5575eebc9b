/**
 * Retune's Scenario 1 in small (docs/retune.md): a Dynamo trace of 110 s, three workers on the
 * op-level timing model, a window every 30 s sweeping 12 router settings. Shared by the tests of
 * where retune's window sweeps run (local pool, inline, Redis).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { HOST_TIME_KEYS } from "../../src/metrics/summary.js";
import type { Prediction } from "../../src/report/prediction.js";
import { engineYaml } from "./configYaml.js";
import { dynamoTrace } from "./dynamoTraces.js";
import { tempDir } from "./specs.js";

/** The head of a retune-only `planner` section: the Planner's scaling off, `retune:` open. */
export const RETUNE_ONLY_PLANNER = `planner:
  policy: enabled
  enable_load_scaling: false
  enable_throughput_scaling: false
  retune:
`;

/**
 * A retune-only run over `trace.jsonl` (a Dynamo trace) on `engine` (an `engine:` block), with
 * the kv_router and the Planner's scaling off: `retune` holds the lines under `planner.retune`
 * (two-space indented below it), `tail` the sections that follow (evaluation, execution).
 */
export function retuneYaml(engine: string, retune: string, tail: string): string {
  return `traffic:
  source: {type: trace, format: dynamo, paths: [trace.jsonl]}
  load: {type: trace_timestamps}
${engine}router: {policy: kv_router, temperature: 0.0}
${RETUNE_ONLY_PLANNER}${retune
  .trim()
  .split("\n")
  .map((line) => `    ${line.trim()}`)
  .join("\n")}
${tail}`;
}

/** Scenario 1's `planner.retune` in small: 12 router settings, TTFT objective, any improvement applies. */
export const SCENARIO1_RETUNE = `interval_seconds: 30
  grace_seconds: 5
  max_parallel: 1
  objective: TTFT
  min_improvement_percentage: 0
  router: {overlap_score_credit: {choices: [0.0, 1.0]}, prefill_load_scale: {choices: [0.0, 1.0, 4.0]}, temperature: {choices: [0.0, 1.0]}}`;

export const SCENARIO1_SLA = "evaluation:\n  sla: {ttft_ms: 1500, itl_ms: 50}\n";

/** Scenario 1 in small, on the op-level timing model (the one whose tables the workers keep). */
export const RETUNE_CONFIG = retuneYaml(
  engineYaml({
    model: "nvidia/Llama-3.1-8B-Instruct-FP8",
    contextLength: null,
    parallelism: "{replicas: 3, tensor: 1}",
    kvCache: "{capacity: {type: fixed, blocks: 1000}}",
    timing: "{type: default}",
  }),
  SCENARIO1_RETUNE,
  SCENARIO1_SLA,
);

/** The trace `RETUNE_CONFIG` reads (`trace.jsonl`). */
export function retuneTrace(): string {
  return dynamoTrace(110, 60);
}

/** `RETUNE_CONFIG` and its trace in a fresh temp dir; returns the config's path. */
export function writeRetuneProject(dir = tempDir("fleetsim-retune-")): string {
  writeFileSync(join(dir, "trace.jsonl"), retuneTrace());
  const config = join(dir, "retune.yaml");
  writeFileSync(config, RETUNE_CONFIG);
  return config;
}

/** The document without what measures the host, and without the `max_parallel` it echoes. */
export function retuneSimulated(p: Prediction): unknown {
  const doc = JSON.parse(JSON.stringify(p)) as {
    summary: Record<string, unknown>;
    run: { planner: { retune: Record<string, unknown> } };
    planner: { retune_events: Record<string, unknown>[] };
  };
  for (const k of HOST_TIME_KEYS) delete doc.summary[k];
  for (const e of doc.planner.retune_events) delete e["sweep_wall_s"];
  delete doc.run.planner.retune["max_parallel"];
  return doc;
}
