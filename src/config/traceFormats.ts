/**
 * What each `traffic.source.format` allows (the AISimulate user guide §11.6 "Trace Format
 * Compatibility", `ai-dynamo/aisimulate@207e5c9:python/aisimulate/src/aisimulate/config/traffic.py`, `ai-dynamo/aisimulate@a2fa5bb:docs/reference/configuration.md`, `ai-dynamo/dynamo@2a06936:components/src/dynamo/planner/simulation/provider.py` `compile_prediction`): its loads,
 * whether `stop.max_virtual_time_seconds` applies, and whether it needs an aggregated engine and
 * no Planner. `config/schema/traffic.ts` checks the traffic rules, `config/schema/index.ts` the document rules.
 */

/** Formats with one trace file and a trace hash-block size (`paths: [one]`, `block_size`, 512). */
export const SINGLE_FILE_FORMATS = [
  "mooncake",
  "mooncake-delta",
  "agentic_mooncake",
  "applied_compute_agentic",
] as const;
export type SingleFileFormat = (typeof SINGLE_FILE_FORMATS)[number];
export type TraceFormat = SingleFileFormat | "dynamo" | "weka";
export const SUPPORTED_FORMATS: readonly TraceFormat[] = [...SINGLE_FILE_FORMATS, "dynamo", "weka"];

export interface TraceFormatRules {
  readonly loads: readonly ("trace_timestamps" | "concurrency")[];
  /** Whether `traffic.stop.max_virtual_time_seconds` is accepted. */
  readonly maxVirtualTime: boolean;
  /** Aggregated engine only, `planner.policy: disabled` only. */
  readonly aggregatedOnly: boolean;
  readonly plannerDisabled: boolean;
  /** Why, in the messages (what the format's unit is). */
  readonly unit: string;
}

const BOTH = ["trace_timestamps", "concurrency"] as const;

/**
 * `dynamo` is the standard trace's row; an agentic Dynamo trace is only known once read, and
 * pipeline/workload.ts applies its stricter row then.
 */
export const TRACE_FORMAT_RULES: Readonly<Record<TraceFormat, TraceFormatRules>> = {
  mooncake: { loads: BOTH, maxVirtualTime: true, aggregatedOnly: false, plannerDisabled: false, unit: "" },
  "mooncake-delta": {
    loads: BOTH,
    maxVirtualTime: true,
    aggregatedOnly: true,
    plannerDisabled: true,
    unit: "its later turns carry only new input",
  },
  agentic_mooncake: {
    loads: ["trace_timestamps"],
    maxVirtualTime: false,
    aggregatedOnly: true,
    plannerDisabled: true,
    unit: "its rows are the nodes of a dependency graph",
  },
  applied_compute_agentic: {
    loads: ["concurrency"],
    maxVirtualTime: true,
    aggregatedOnly: false,
    plannerDisabled: false,
    unit: "its sessions have no timestamps",
  },
  dynamo: { loads: BOTH, maxVirtualTime: true, aggregatedOnly: false, plannerDisabled: false, unit: "" },
  weka: {
    loads: ["trace_timestamps"],
    maxVirtualTime: false,
    aggregatedOnly: true,
    plannerDisabled: true,
    unit: "its plays are lowered to dependency graphs, as agentic_mooncake",
  },
};
