/**
 * `traffic` = `source` + `load` + `stop` (`ai-dynamo/aisimulate@207e5c9:python/aisimulate/src/aisimulate/config/traffic.py`). Each part is one strict object
 * holding every reference field, and per-type rules are checked afterwards, the way the
 * reference's validators do: that is what yields messages such as
 * `traffic.load.type='poisson' does not accept ['concurrency']` instead of a union mismatch.
 *
 * fleetsim extensions (docs/traffic.md): `synthetic-shared-prefix` sources, distribution-valued
 * token lengths (`config/schema/trafficLength.ts`), `source.seed`, and `load.stages`.
 */
import * as z from "zod";
import { fixedLength, type LengthSpec } from "../../traffic/lengthDistribution.js";
import { expectedStagedArrivals, MAX_STAGED_ARRIVALS } from "../../traffic/stagedArrivals.js";
import { type SingleFileFormat, SUPPORTED_FORMATS, TRACE_FORMAT_RULES } from "../traceFormats.js";
import {
  fail,
  int,
  nonNegInt,
  nonNegNum,
  oneOf,
  PATH,
  posInt,
  posNum,
  presentExcept,
  pyList,
  unsupportedKey,
} from "./primitives.js";
import { lengthField } from "./trafficLength.js";

const AGENTIC_LOAD = "agentic trace load";

/** Bounds (fleetsim's, docs/cli.md): sizes within what they mean. */
export const MAX_SESSION_TURNS = 10_000;
export const MAX_PREFIX_GROUPS = 1_000_000;
export const MAX_SHARED_PREFIX_PROMPTS = 10_000_000;
export const MAX_STAGES = 10_000;

/** Omitted `traffic` means exactly this; a supplied `traffic` is not merged with it. */
export const DEFAULT_TRAFFIC = {
  source: { type: "synthetic", input_tokens: 1024, output_tokens: 128 },
  load: { type: "concurrency", concurrency: 10 },
  stop: { requests: 100 },
} as const;

const SOURCE_FIELDS = {
  synthetic: ["type", "input_tokens", "output_tokens", "seed"],
  "synthetic-session": ["type", "new_input_tokens_per_turn", "output_tokens_per_turn", "session", "seed"],
  "synthetic-shared-prefix": [
    "type",
    "groups",
    "prompts_per_group",
    "system_prompt_tokens",
    "question_tokens",
    "output_tokens",
    "seed",
  ],
  trace: ["type", "format", "paths", "block_size", "nested_timestamp_basis"],
} as const;

/** `source.session` of `synthetic-session` (reference `SessionShape`). */
const SessionShape = z
  .strictObject({
    turns: int().min(2).max(MAX_SESSION_TURNS).default(4),
    shared_prefix_ratio: z.number().min(0).max(1).default(0),
    prefix_groups: nonNegInt().max(MAX_PREFIX_GROUPS).default(0),
    inter_turn_delay_ms: nonNegNum().default(0),
  })
  .superRefine((s, ctx) => {
    if (s.shared_prefix_ratio > 0 && s.prefix_groups === 0) {
      fail(ctx, `${PATH} must be positive when shared_prefix_ratio is positive`, ["prefix_groups"]);
    }
  });

const Source = z
  .strictObject({
    type: oneOf(
      ["synthetic", "synthetic-session", "synthetic-shared-prefix", "trace"],
      ["synthetic", "synthetic-session", "synthetic-shared-prefix", "trace"],
    ).default("synthetic"),
    input_tokens: lengthField(1),
    output_tokens: lengthField(1),
    seed: nonNegInt().optional(),
    new_input_tokens_per_turn: lengthField(1),
    output_tokens_per_turn: lengthField(1),
    session: SessionShape.optional(),
    groups: posInt().max(MAX_PREFIX_GROUPS).optional(),
    prompts_per_group: posInt().max(MAX_SHARED_PREFIX_PROMPTS).optional(),
    system_prompt_tokens: posInt().max(0x7fffffff).optional(),
    question_tokens: lengthField(0),
    format: oneOf(
      ["mooncake", "mooncake-delta", "agentic_mooncake", "applied_compute_agentic", "dynamo", "weka"],
      SUPPORTED_FORMATS,
    ).optional(),
    paths: z.array(z.string().min(1)).optional(),
    block_size: posInt().optional(),
    images: unsupportedKey("multimodal synthetic traffic"),
    /** `format: weka`: how a subagent's request times relate to the subagent's (docs/traces.md "Weka"). */
    nested_timestamp_basis: z.enum(["auto", "absolute", "relative"]).optional(),
  })
  .superRefine((src, ctx) => {
    const extra = presentExcept(src, SOURCE_FIELDS[src.type]);
    if (extra.length > 0) {
      fail(ctx, `${PATH}.type='${src.type}' does not accept ${pyList(extra)}`);
      return;
    }
    if (src.type === "synthetic-session" && src.session === undefined) {
      fail(ctx, `${PATH}.type='synthetic-session' requires session`);
    }
    if (src.type === "synthetic-shared-prefix") {
      const missing = ["groups", "prompts_per_group", "system_prompt_tokens"].filter(
        (k) => src[k as keyof typeof src] === undefined,
      );
      if (missing.length > 0) {
        fail(ctx, `${PATH}.type='synthetic-shared-prefix' requires ${missing.join(", ")}`);
      } else if (src.groups! * src.prompts_per_group! > MAX_SHARED_PREFIX_PROMPTS) {
        fail(
          ctx,
          `${PATH} × prompts_per_group = ${src.groups! * src.prompts_per_group!} prompts, more than ${MAX_SHARED_PREFIX_PROMPTS}`,
          ["groups"],
        );
      }
    }
    if (src.type === "trace") {
      const format = src.format ?? "mooncake";
      if (src.nested_timestamp_basis !== undefined && format !== "weka") {
        fail(ctx, `${PATH} is only valid with format 'weka'`, ["nested_timestamp_basis"]);
      }
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
    const seed = src.seed ?? 42;
    if (src.type === "synthetic") {
      return {
        type: "synthetic" as const,
        input_tokens: src.input_tokens ?? fixedLength(1024),
        output_tokens: src.output_tokens ?? fixedLength(128),
        seed,
      };
    }
    if (src.type === "synthetic-session") {
      const s = src.session!;
      return {
        type: "synthetic-session" as const,
        new_input_tokens_per_turn: src.new_input_tokens_per_turn ?? fixedLength(1024),
        output_tokens_per_turn: src.output_tokens_per_turn ?? fixedLength(128),
        session: s,
        seed,
      };
    }
    if (src.type === "synthetic-shared-prefix") {
      return {
        type: "synthetic-shared-prefix" as const,
        groups: src.groups!,
        prompts_per_group: src.prompts_per_group!,
        system_prompt_tokens: src.system_prompt_tokens!,
        question_tokens: src.question_tokens ?? fixedLength(128),
        output_tokens: src.output_tokens ?? fixedLength(128),
        seed,
      };
    }
    // Non-null paths: the refinement above required them.
    const format = src.format ?? "mooncake";
    if (format === "weka") {
      // The block size is the corpus's; an explicit one is only an equality check (as for Dynamo).
      return {
        type: "trace" as const,
        format: "weka" as const,
        path: src.paths![0],
        block_size: src.block_size ?? null,
        nested_timestamp_basis: src.nested_timestamp_basis ?? ("auto" as const),
      };
    }
    if (format === "dynamo") {
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
      format: format satisfies SingleFileFormat,
      path: src.paths![0],
      block_size: src.block_size ?? 512,
    };
  });

/** One stage of `load.stages`: a rate and a duration or a request count (docs/traffic.md). */
const Stage = z
  .strictObject({
    requests_per_second: nonNegNum(),
    duration_seconds: posNum().optional(),
    requests: posInt().optional(),
  })
  .superRefine((st, ctx) => {
    const given = presentExcept(st, ["requests_per_second"]);
    if (given.length !== 1) {
      fail(
        ctx,
        `${PATH} requires exactly one of duration_seconds or requests${given.length > 1 ? `, got ${pyList(given)}` : ""}`,
      );
    } else if (st.requests !== undefined && st.requests_per_second === 0) {
      fail(ctx, `${PATH} must be greater than 0 in a stage of requests`, ["requests_per_second"]);
    }
  })
  .transform((st) => ({
    requests_per_second: st.requests_per_second,
    duration_seconds: st.duration_seconds ?? null,
    requests: st.requests ?? null,
  }));

const LOAD_FIELDS = {
  concurrency: ["type", "concurrency", "warmup_sessions"],
  poisson: ["type", "requests_per_second", "sessions_per_second", "seed", "stages"],
  constant_rate: ["type", "requests_per_second", "sessions_per_second", "stages"],
  trace_timestamps: ["type", "speedup"],
} as const;

const Load = z
  .strictObject({
    type: oneOf(
      ["concurrency", "poisson", "constant_rate", "kv_capacity_fraction", "trace_timestamps"],
      ["concurrency", "poisson", "constant_rate", "trace_timestamps"],
    ).default("concurrency"),
    concurrency: posInt().optional(),
    warmup_sessions: posInt().optional(),
    requests_per_second: posNum().optional(),
    sessions_per_second: posNum().optional(),
    seed: int().min(0).optional(),
    speedup: posNum().optional(),
    stages: z.array(Stage).min(1).max(MAX_STAGES).optional(),
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
      return;
    }
    const rates = presentExcept(load, ["type", "seed", "concurrency", "warmup_sessions", "speedup"]);
    if (rates.length > 1) {
      fail(
        ctx,
        `${PATH} takes one of requests_per_second, sessions_per_second or stages, got ${pyList(rates)}`,
      );
      return;
    }
    if (load.stages !== undefined) {
      const expected = expectedStagedArrivals(
        load.stages.map((s) => ({
          requestsPerSecond: s.requests_per_second,
          durationMs: s.duration_seconds === null ? null : s.duration_seconds * 1000,
          requests: s.requests,
        })),
      );
      if (expected > MAX_STAGED_ARRIVALS) {
        fail(ctx, `${PATH} expect ${Math.round(expected)} arrivals, more than ${MAX_STAGED_ARRIVALS}`, [
          "stages",
        ]);
      }
    }
  })
  .transform((load) => {
    switch (load.type) {
      case "concurrency":
        return {
          type: load.type,
          concurrency: load.concurrency ?? 10,
          ...(load.warmup_sessions !== undefined ? { warmup_sessions: load.warmup_sessions } : {}),
        };
      case "poisson":
        return { type: load.type, ...openLoopRates(load), seed: load.seed ?? 42 };
      case "constant_rate":
        return { type: load.type, ...openLoopRates(load) };
      case "trace_timestamps":
        return { type: load.type, speedup: load.speedup ?? 1.0 };
    }
  });

/** The rates and stages of an open-loop load (`poisson`, `constant_rate`), null where unset. */
function openLoopRates<S>(load: {
  readonly requests_per_second?: number | undefined;
  readonly sessions_per_second?: number | undefined;
  readonly stages?: S | undefined;
}) {
  return {
    requests_per_second: load.requests_per_second ?? null,
    sessions_per_second: load.sessions_per_second ?? null,
    stages: load.stages ?? null,
  };
}

const Stop = z.strictObject({
  requests: posInt().optional(),
  requests_per_load_unit: posNum().optional(),
  sessions: posInt().optional(),
  sessions_per_load_unit: posNum().optional(),
  max_virtual_time_seconds: posNum().optional(),
});

const SYNTHETIC_LOADS = ["concurrency", "poisson", "constant_rate"] as const;
const LOADS_FOR_SOURCE = {
  synthetic: SYNTHETIC_LOADS,
  "synthetic-session": SYNTHETIC_LOADS,
  "synthetic-shared-prefix": SYNTHETIC_LOADS,
  trace: ["trace_timestamps", "concurrency"],
} as const;

const REQUEST_STOPS = ["requests", "requests_per_load_unit"] as const;
const SESSION_STOPS = ["sessions", "sessions_per_load_unit"] as const;

type Ctx = Pick<z.RefinementCtx, "addIssue">;
type StopConfig = z.output<typeof Stop>;

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
        source.type !== "trace"
          ? `${PATH}='${load.type}' requires traffic.source.type='trace'`
          : `${PATH}='${load.type}' is not supported with traffic.source.type='trace'; use 'trace_timestamps' or 'concurrency'`,
        ["load", "type"],
      );
      return;
    }
    if (source.type === "trace") {
      const counts = presentExcept(stop ?? {}, ["max_virtual_time_seconds"]);
      if (counts.length > 0) {
        fail(
          ctx,
          `trace traffic does not accept count stops ${pyList(counts)}; a trace runs to its end or to ${PATH}.max_virtual_time_seconds`,
          ["stop"],
        );
        return;
      }
      checkTraceFormat(ctx, source.format, load.type, stop);
      return;
    }
    const sessions = source.type === "synthetic-session";
    if (load.type === "poisson" || load.type === "constant_rate") {
      if (!checkRate(ctx, load, sessions)) return;
    }
    if (stop?.max_virtual_time_seconds !== undefined) {
      fail(ctx, `${PATH} is only valid with traffic.source.type='trace'`, [
        "stop",
        "max_virtual_time_seconds",
      ]);
      return;
    }
    const staged = (load.type === "poisson" || load.type === "constant_rate") && load.stages !== null;
    checkCountStop(ctx, stop, sessions, staged);
  });

/** What the trace's format allows (traceFormats.ts): its loads, and the virtual-time cap. */
function checkTraceFormat(
  ctx: Ctx,
  format: keyof typeof TRACE_FORMAT_RULES,
  load: string,
  stop: StopConfig | undefined,
): void {
  const rules = TRACE_FORMAT_RULES[format];
  const loads: readonly string[] = rules.loads;
  if (!loads.includes(load)) {
    fail(
      ctx,
      `${PATH}='${load}' is not supported with traffic.source.format='${format}' (${rules.unit}); use ${loads.map((l) => `'${l}'`).join(" or ")}`,
      ["load", "type"],
    );
    return;
  }
  if (!rules.maxVirtualTime && stop?.max_virtual_time_seconds !== undefined) {
    fail(
      ctx,
      `${PATH} is not supported with traffic.source.format='${format}' (${rules.unit}, replayed to its end); remove it`,
      ["stop", "max_virtual_time_seconds"],
    );
  }
}

/** The rate a synthetic source needs: requests (or stages) for requests, sessions for sessions. */
function checkRate(
  ctx: Ctx,
  load: {
    type: "poisson" | "constant_rate";
    requests_per_second: number | null;
    sessions_per_second: number | null;
    stages: unknown[] | null;
  },
  sessions: boolean,
): boolean {
  if (sessions) {
    if (load.requests_per_second !== null) {
      fail(
        ctx,
        `${PATH} is not accepted with traffic.source.type='synthetic-session'; use sessions_per_second`,
        ["load", "requests_per_second"],
      );
      return false;
    }
    if (load.stages !== null) {
      fail(ctx, `${PATH} are not supported with traffic.source.type='synthetic-session' (fleetsim)`, [
        "load",
        "stages",
      ]);
      return false;
    }
    if (load.sessions_per_second === null) {
      fail(ctx, `${PATH}.type='${load.type}' requires sessions_per_second`, ["load"]);
      return false;
    }
    return true;
  }
  if (load.sessions_per_second !== null) {
    fail(ctx, `${PATH} requires traffic.source.type='synthetic-session'; use requests_per_second`, [
      "load",
      "sessions_per_second",
    ]);
    return false;
  }
  if (load.requests_per_second === null && load.stages === null) {
    fail(ctx, `${PATH}.type='${load.type}' requires requests_per_second`, ["load"]);
    return false;
  }
  return true;
}

/** Exactly one count stop of the source's unit; none with stages (they fix the count). */
function checkCountStop(ctx: Ctx, stop: StopConfig | undefined, sessions: boolean, staged: boolean): void {
  const given = presentExcept(stop ?? {}, []);
  if (staged) {
    if (given.length > 0) {
      fail(
        ctx,
        `traffic.load.stages fix how many requests arrive; ${PATH} does not accept ${pyList(given)}`,
        ["stop"],
      );
    }
    return;
  }
  const own: readonly string[] = sessions ? SESSION_STOPS : REQUEST_STOPS;
  const wrong = given.filter((k) => !own.includes(k));
  if (wrong.length > 0) {
    fail(
      ctx,
      sessions
        ? `${PATH} is for request traffic; traffic.source.type='synthetic-session' stops at sessions or sessions_per_load_unit`
        : `${PATH} is for traffic.source.type='synthetic-session'; use requests or requests_per_load_unit`,
      ["stop", wrong[0]],
    );
    return;
  }
  const what = sessions ? "synthetic session traffic" : "synthetic traffic";
  if (given.length === 0) {
    fail(ctx, `${what} requires a stop condition`, ["stop"]);
  } else if (given.length > 1) {
    fail(ctx, `${what} requires exactly one stop condition, got ${pyList(given)}`, ["stop"]);
  }
}

/** What the document-level format rules read (`checkTraceFormatDocument`). */
export interface TraceFormatDocument {
  readonly traffic: { readonly source: { readonly type: string; readonly format?: string } };
  readonly engine: { readonly mode: string };
  readonly planner: { readonly policy: string };
}

/**
 * The format rules that read other sections (traceFormats.ts): an aggregated engine and no
 * Planner for `mooncake-delta` and `agentic_mooncake`, as the reference requires.
 */
export function checkTraceFormatDocument(doc: TraceFormatDocument, ctx: Ctx): void {
  const source = doc.traffic.source;
  if (source.type !== "trace" || source.format === undefined) return;
  const format = source.format as keyof typeof TRACE_FORMAT_RULES;
  const rules = TRACE_FORMAT_RULES[format];
  if (rules.aggregatedOnly && doc.engine.mode !== "aggregated") {
    fail(
      ctx,
      `${PATH}='${doc.engine.mode}' is not supported with traffic.source.format='${format}' (${rules.unit}); it replays on an aggregated deployment only`,
      ["engine", "mode"],
    );
  }
  if (rules.plannerDisabled && doc.planner.policy !== "disabled") {
    fail(
      ctx,
      `${PATH}='${doc.planner.policy}' is not supported with traffic.source.format='${format}' (${rules.unit}); the format requires planner.policy='disabled'`,
      ["planner", "policy"],
    );
  }
}

/** Sections whose issues make `checkTraceFormatDocument` skip: it would judge unvalidated values. */
const FORMAT_DOCUMENT_SECTIONS: ReadonlySet<unknown> = new Set(["traffic", "engine", "planner"]);

export const traceFormatDocumentWhen = {
  when: (payload: z.core.ParsePayload) =>
    !payload.issues.some((iss) => iss.path !== undefined && FORMAT_DOCUMENT_SECTIONS.has(iss.path[0])),
};

export type TrafficConfig = z.output<typeof Traffic>;
export type SourceConfig = TrafficConfig["source"];
export type LoadConfig = TrafficConfig["load"];
export type { LengthSpec };
