/**
 * Seed 001 (the planner walkthrough) as the config tests read it: its trace path, its traffic,
 * its engines (aggregated, step 1; disaggregated, step 2) and its router and SLA, each verbatim
 * except that the planner section is dropped.
 */

/** The model, system and backend of every seed engine (`engine.*` after `mode`). */
const ENGINE_HEAD = `  model: nvidia/Llama-3.1-8B-Instruct-FP8
  hardware: h200_sxm
  backend: vllm
  context_length: max
`;

/** A seed worker role's settings (6-space indent), without `startup_seconds`. */
export function seedRoleYaml(replicas: number, maxSequences: number): string {
  return `      parallelism: {replicas: ${replicas}, tensor: 1, pipeline: 1, attention_data: 1, moe_tensor: 1, moe_expert: 1}
      scheduler: {max_batched_tokens: 8192, max_sequences: ${maxSequences}}
      kv_cache: {block_size: 64, prefix_caching: true, capacity: {type: default, memory_fraction: 0.9}}
      timing: {type: default}
`;
}

/** The aggregated engine of the seeds (`replicas` workers of 256 sequences), `startup_seconds: 0` unless `startup` is false. */
export function seedAggregatedEngine(replicas: number, startup = true): string {
  return `engine:
  mode: aggregated
${ENGINE_HEAD}  workers:
    aggregated:
${seedRoleYaml(replicas, 256)}${startup ? "      startup_seconds: 0\n" : ""}`;
}

export const SEED_001 = {
  /** The trace path (relative to the config file). */
  trace: "traces/mooncake-fast25/toolagent_trace.jsonl",
  /** Step 1's traffic. */
  traffic: `traffic:
  source:
    type: trace
    format: mooncake
    paths: [traces/mooncake-fast25/toolagent_trace.jsonl]
    block_size: 512
  load: {type: trace_timestamps, speedup: 1.0}
  stop: {max_virtual_time_seconds: 3600}
`,
  /** Step 1's engine. */
  aggregatedEngine: seedAggregatedEngine(2),
  routerAndSla: `router:
  policy: round_robin
  prefill_load_model: {type: none}
evaluation:
  sla: {ttft_ms: 1500, itl_ms: 50}
`,
  /** The head of the seeds' planner sections: SLA target, both scalings, 300 s and 10 s intervals. */
  plannerHead: `planner:
  policy: enabled
  target: sla
  enable_throughput_scaling: true
  enable_load_scaling: true
  throughput_adjustment_interval_seconds: 300
  load_adjustment_interval_seconds: 10
`,
  /** Step 2: the engine mapping of planner-disaggregated.yaml. */
  disaggregatedEngine: `engine:
  mode: disaggregated
${ENGINE_HEAD}  kv_transfer: {bytes_per_token: auto, bandwidth_gb_per_second: 400, timing_mode: destination_missing}
  workers:
    prefill:
${seedRoleYaml(1, 64)}      startup_seconds: 0
    decode:
${seedRoleYaml(1, 256)}      startup_seconds: 0
`,
} as const;
