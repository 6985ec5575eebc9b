/**
 * What a worker does: the aggregated pool's workers run whole requests; a disaggregated
 * deployment's prefill workers run prompts and hand their KV cache to decode workers. One type
 * for the config's roles, the engines, the router presets, the Planner's perf models and the
 * timeline.
 */
export type WorkerRole = "aggregated" | "prefill" | "decode";
