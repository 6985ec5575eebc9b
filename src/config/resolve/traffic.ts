/**
 * The synthetic parts of `traffic` → RunSpec: sources (fixed or distributed lengths, shared-prefix
 * groups, sessions), loads (rates, stages) and count stops (`*_per_load_unit` resolved).
 */
import { nominalMean } from "../../traffic/lengthDistribution.js";
import { expectedStagedArrivals, nominalStagedSpanMs, type RateStage } from "../../traffic/stagedArrivals.js";
import type { LoadSpec, SourceSpec, StopSpec } from "../runSpec.js";
import { roundHalfEven } from "../schema/primitives.js";
import type { LoadConfig, SourceConfig, TrafficConfig } from "../schema/traffic.js";

type SyntheticSourceConfig = Exclude<SourceConfig, { type: "trace" }>;

export function resolveSyntheticSource(src: SyntheticSourceConfig): SourceSpec {
  switch (src.type) {
    case "synthetic": {
      const base = {
        type: "synthetic",
        inputTokens: nominalMean(src.input_tokens),
        outputTokens: nominalMean(src.output_tokens),
      } as const;
      // Fixed lengths: the reference's spec, nothing more (so its runs and caches are unchanged).
      if (src.input_tokens.distribution === "fixed" && src.output_tokens.distribution === "fixed")
        return base;
      return { ...base, input: src.input_tokens, output: src.output_tokens, seed: src.seed };
    }
    case "synthetic-shared-prefix":
      return {
        type: "synthetic",
        inputTokens: src.system_prompt_tokens + nominalMean(src.question_tokens),
        outputTokens: nominalMean(src.output_tokens),
        input: src.question_tokens,
        output: src.output_tokens,
        seed: src.seed,
        sharedPrefix: {
          groups: src.groups,
          promptsPerGroup: src.prompts_per_group,
          systemPromptTokens: src.system_prompt_tokens,
        },
      };
    case "synthetic-session":
      return {
        type: "synthetic-session",
        newInputTokensPerTurn: nominalMean(src.new_input_tokens_per_turn),
        outputTokensPerTurn: nominalMean(src.output_tokens_per_turn),
        newInput: src.new_input_tokens_per_turn,
        output: src.output_tokens_per_turn,
        turns: src.session.turns,
        sharedPrefixRatio: src.session.shared_prefix_ratio,
        prefixGroups: src.session.prefix_groups,
        interTurnDelayMs: src.session.inter_turn_delay_ms,
        seed: src.seed,
      };
  }
}

function stagesOf(load: LoadConfig): RateStage[] | null {
  if (load.type !== "poisson" && load.type !== "constant_rate") return null;
  if (load.stages === null) return null;
  return load.stages.map((s) => ({
    requestsPerSecond: s.requests_per_second,
    durationMs: s.duration_seconds === null ? null : s.duration_seconds * 1000,
    requests: s.requests,
  }));
}

/** The rate an open-loop load gives its unit (requests, or sessions); the stages' mean rate. */
function rateOf(load: LoadConfig & { type: "poisson" | "constant_rate" }): number {
  const stages = stagesOf(load);
  if (stages !== null) return (expectedStagedArrivals(stages) * 1000) / nominalStagedSpanMs(stages);
  // The schema requires the source's rate (or stages).
  return (load.requests_per_second ?? load.sessions_per_second)!;
}

export function resolveLoad(load: LoadConfig): LoadSpec {
  switch (load.type) {
    case "concurrency":
      return load.warmup_sessions === undefined
        ? { type: "concurrency", concurrency: load.concurrency }
        : { type: "concurrency", concurrency: load.concurrency, warmupSessions: load.warmup_sessions };
    case "poisson": {
      const stages = stagesOf(load);
      const spec = { type: "poisson", requestsPerSecond: rateOf(load), seed: load.seed } as const;
      return stages === null ? spec : { ...spec, stages };
    }
    case "constant_rate": {
      const stages = stagesOf(load);
      const spec = { type: "constant_rate", requestsPerSecond: rateOf(load) } as const;
      return stages === null ? spec : { ...spec, stages };
    }
    case "trace_timestamps":
      return { type: "trace_timestamps", speedup: load.speedup };
  }
}

export function resolveStop(traffic: TrafficConfig): StopSpec {
  const { stop, load, source } = traffic;
  if (source.type === "trace") {
    const seconds = stop?.max_virtual_time_seconds;
    return { requests: null, maxVirtualTimeMs: seconds === undefined ? null : seconds * 1000 };
  }
  const stages = stagesOf(load);
  if (stages !== null) {
    return { requests: Math.round(expectedStagedArrivals(stages)), maxVirtualTimeMs: null };
  }
  // Schema guarantees exactly one count stop of the source's unit for synthetic traffic.
  const unit =
    load.type === "concurrency" ? load.concurrency : load.type === "trace_timestamps" ? 1 : rateOf(load);
  const perUnit = (count: number | undefined, relative: number | undefined): number =>
    count ?? Math.max(1, roundHalfEven(relative! * unit));
  if (source.type === "synthetic-session") {
    const sessions = perUnit(stop?.sessions, stop?.sessions_per_load_unit);
    return { requests: sessions * source.session.turns, sessions, maxVirtualTimeMs: null };
  }
  return { requests: perUnit(stop?.requests, stop?.requests_per_load_unit), maxVirtualTimeMs: null };
}
