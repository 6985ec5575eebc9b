/**
 * `traffic` = `source` + `load` + `stop` (aisimulate.md §2.1). Each part is one strict object
 * holding every reference field, and per-type rules are checked afterwards, the way the
 * reference's validators do: that is what yields messages such as
 * `traffic.load.type='poisson' does not accept ['concurrency']` instead of a union mismatch.
 */
import { z } from "zod";
import {
  fail,
  int,
  oneOf,
  PATH,
  posInt,
  posNum,
  presentExcept,
  pyList,
  unsupportedKey,
} from "./schemaPrimitives.js";

const SESSION_TRAFFIC = "session traffic";
const AGENTIC_LOAD = "agentic trace load";

/** Omitted `traffic` means exactly this; a supplied `traffic` is not merged with it. */
export const DEFAULT_TRAFFIC = {
  source: { type: "synthetic", input_tokens: 1024, output_tokens: 128 },
  load: { type: "concurrency", concurrency: 10 },
  stop: { requests: 100 },
} as const;

const SOURCE_FIELDS = {
  synthetic: ["type", "input_tokens", "output_tokens"],
  trace: ["type", "format", "paths", "block_size"],
} as const;

const Source = z
  .strictObject({
    type: oneOf(["synthetic", "synthetic-session", "trace"], ["synthetic", "trace"]).default("synthetic"),
    input_tokens: posInt().optional(),
    output_tokens: posInt().optional(),
    format: oneOf(
      ["mooncake", "mooncake-delta", "agentic_mooncake", "applied_compute_agentic", "dynamo", "weka"],
      ["mooncake", "dynamo"],
    ).optional(),
    paths: z.array(z.string().min(1)).optional(),
    block_size: posInt().optional(),
    images: unsupportedKey("multimodal synthetic traffic"),
    new_input_tokens_per_turn: unsupportedKey(SESSION_TRAFFIC),
    output_tokens_per_turn: unsupportedKey(SESSION_TRAFFIC),
    session: unsupportedKey(SESSION_TRAFFIC),
    nested_timestamp_basis: unsupportedKey("Weka traces"),
  })
  .superRefine((src, ctx) => {
    const extra = presentExcept(src, SOURCE_FIELDS[src.type]);
    if (extra.length > 0) {
      fail(ctx, `${PATH}.type='${src.type}' does not accept ${pyList(extra)}`);
    }
    if (src.type === "trace") {
      const format = src.format ?? "mooncake";
      if (src.paths === undefined) {
        fail(ctx, `${PATH}.type='trace' requires paths`);
      } else if (format === "dynamo") {
        // Only the Dynamo format spans several files (shards, directories, patterns).
        if (src.paths.length === 0) fail(ctx, `${PATH} must list at least 1 path`, ["paths"]);
      } else if (src.paths.length !== 1) {
        fail(ctx, `${PATH} must list exactly 1 path for format '${format}' (got ${src.paths.length})`, [
          "paths",
        ]);
      }
    }
  })
  .transform((src) => {
    if (src.type === "synthetic") {
      return {
        type: "synthetic" as const,
        input_tokens: src.input_tokens ?? 1024,
        output_tokens: src.output_tokens ?? 128,
      };
    }
    // Non-null paths: the refinement above required them.
    if (src.format === "dynamo") {
      // The block size is embedded in a Dynamo trace; an explicit one is only an equality check.
      return {
        type: "trace" as const,
        format: "dynamo" as const,
        paths: src.paths!,
        block_size: src.block_size ?? null,
      };
    }
    return {
      type: "trace" as const,
      format: "mooncake" as const,
      path: src.paths![0],
      block_size: src.block_size ?? 512,
    };
  });

const LOAD_FIELDS = {
  concurrency: ["type", "concurrency"],
  poisson: ["type", "requests_per_second", "seed"],
  constant_rate: ["type", "requests_per_second"],
  trace_timestamps: ["type", "speedup"],
} as const;

const Load = z
  .strictObject({
    type: oneOf(
      ["concurrency", "poisson", "constant_rate", "kv_capacity_fraction", "trace_timestamps"],
      ["concurrency", "poisson", "constant_rate", "trace_timestamps"],
    ).default("concurrency"),
    concurrency: posInt().optional(),
    requests_per_second: posNum().optional(),
    seed: int().min(0).optional(),
    speedup: posNum().optional(),
    sessions_per_second: unsupportedKey(SESSION_TRAFFIC),
    fraction: unsupportedKey("kv_capacity_fraction load is recommend-only"),
    agentic_lanes: unsupportedKey(AGENTIC_LOAD),
    agentic_snapshot: unsupportedKey(AGENTIC_LOAD),
    agentic_warmup: unsupportedKey(AGENTIC_LOAD),
    agentic_profile: unsupportedKey(AGENTIC_LOAD),
  })
  .superRefine((load, ctx) => {
    const extra = presentExcept(load, LOAD_FIELDS[load.type]);
    if (extra.length > 0) {
      fail(ctx, `${PATH}.type='${load.type}' does not accept ${pyList(extra)}`);
    }
    if (
      (load.type === "poisson" || load.type === "constant_rate") &&
      load.requests_per_second === undefined
    ) {
      fail(ctx, `${PATH}.type='${load.type}' requires requests_per_second`);
    }
  })
  .transform((load) => {
    switch (load.type) {
      case "concurrency":
        return { type: load.type, concurrency: load.concurrency ?? 10 };
      case "poisson":
        return { type: load.type, requests_per_second: load.requests_per_second!, seed: load.seed ?? 42 };
      case "constant_rate":
        return { type: load.type, requests_per_second: load.requests_per_second! };
      case "trace_timestamps":
        return { type: load.type, speedup: load.speedup ?? 1.0 };
    }
  });

const Stop = z.strictObject({
  requests: posInt().optional(),
  requests_per_load_unit: posNum().optional(),
  max_virtual_time_seconds: posNum().optional(),
  sessions: unsupportedKey(SESSION_TRAFFIC),
  sessions_per_load_unit: unsupportedKey(SESSION_TRAFFIC),
});

const LOADS_FOR_SOURCE = {
  synthetic: ["concurrency", "poisson", "constant_rate"],
  trace: ["trace_timestamps", "concurrency"],
} as const;

export const Traffic = z
  .strictObject({
    source: Source.prefault({}),
    load: Load.prefault({}),
    stop: Stop.optional(),
  })
  .superRefine((traffic, ctx) => {
    const { source, load, stop } = traffic;
    const allowedLoads: readonly string[] = LOADS_FOR_SOURCE[source.type];
    if (!allowedLoads.includes(load.type)) {
      fail(
        ctx,
        source.type === "synthetic"
          ? `${PATH}='${load.type}' requires traffic.source.type='trace'`
          : `${PATH}='${load.type}' is not supported with traffic.source.type='trace'; use 'trace_timestamps' or 'concurrency'`,
        ["load", "type"],
      );
    }
    if (source.type === "synthetic") {
      const counts = [stop?.requests, stop?.requests_per_load_unit].filter((v) => v !== undefined);
      if (counts.length === 0) {
        fail(ctx, "synthetic traffic requires a stop condition", ["stop"]);
      } else if (counts.length > 1) {
        fail(
          ctx,
          `synthetic traffic requires exactly one stop condition, got ${pyList(["requests", "requests_per_load_unit"])}`,
          ["stop"],
        );
      }
      if (stop?.max_virtual_time_seconds !== undefined) {
        fail(ctx, `${PATH} is only valid with traffic.source.type='trace'`, [
          "stop",
          "max_virtual_time_seconds",
        ]);
      }
    } else {
      const counts = presentExcept(stop ?? {}, ["max_virtual_time_seconds"]);
      if (counts.length > 0) {
        fail(
          ctx,
          `trace traffic does not accept count stops ${pyList(counts)}; a trace runs to its end or to ${PATH}.max_virtual_time_seconds`,
          ["stop"],
        );
      }
    }
  });

export type TrafficConfig = z.output<typeof Traffic>;
export type SourceConfig = TrafficConfig["source"];
export type LoadConfig = TrafficConfig["load"];
