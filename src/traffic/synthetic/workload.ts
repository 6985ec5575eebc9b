/**
 * Builds the request table of a synthetic run spec: plain requests (fixed or sampled lengths),
 * shared-prefix groups, or multi-turn sessions, under a rate, staged rates or closed loop.
 */

import { Prng } from "../../util/prng.js";
import { LengthSampler } from "../lengthDistribution.js";
import type { RequestTable } from "../requests.js";
import { makeSharedPrefixTable } from "../sharedPrefix.js";
import { stagedArrivalTimes } from "../stagedArrivals.js";
import type { LoadSpec, StopSpec, SyntheticSessionSourceSpec, SyntheticSourceSpec } from "../workloadSpec.js";
import { arrivalTimes, makeSyntheticTable, type SyntheticArrivals } from "./index.js";
import { makeSessionTable } from "./sessions.js";

export function makeSyntheticWorkload(
  source: SyntheticSourceSpec | SyntheticSessionSourceSpec,
  load: LoadSpec,
  stop: StopSpec,
  engineBlockSize: number,
): RequestTable {
  if (load.type === "trace_timestamps") throw new Error("internal: trace_timestamps with a synthetic source");
  const arrivals: SyntheticArrivals = load;
  const seed = source.seed ?? 42;
  if (source.type === "synthetic-session") {
    const sessions = stop.sessions ?? 0;
    return makeSessionTable({
      sessions,
      turns: source.turns,
      newInput: source.newInput,
      output: source.output,
      sharedPrefixRatio: source.sharedPrefixRatio,
      prefixGroups: source.prefixGroups,
      interTurnDelayMs: source.interTurnDelayMs,
      engineBlockSize,
      seed,
      firstTurnMs: arrivalTimes(sessions, arrivals),
    });
  }
  const stages = load.type === "concurrency" ? null : (load.stages ?? null);
  const timestampMs =
    stages === null
      ? arrivalTimes(stop.requests ?? 0, arrivals)
      : stagedArrivalTimes(
          stages,
          load.type as "poisson" | "constant_rate",
          load.type === "poisson" ? load.seed : 0,
        ).timestampMs;
  const count = timestampMs.length;
  const shared = source.sharedPrefix ?? null;
  if (shared !== null) {
    return makeSharedPrefixTable({
      groups: shared.groups,
      promptsPerGroup: shared.promptsPerGroup,
      systemPromptTokens: shared.systemPromptTokens,
      question: source.input ?? {
        distribution: "fixed",
        value: source.inputTokens - shared.systemPromptTokens,
      },
      output: source.output ?? { distribution: "fixed", value: source.outputTokens },
      requests: count,
      engineBlockSize,
      seed,
      timestampMs,
    });
  }
  // Lengths: all prompt lengths, then all output lengths, from one stream (the reference's
  // InferenceX draw order for `random_range_ratio`, `ai-dynamo/aisimulate@791ea8e:python/aisimulate/src/aisimulate/compiler.py`).
  const rng = new Prng(seed);
  const sampled = (spec: typeof source.input) =>
    spec === undefined || spec.distribution === "fixed"
      ? undefined
      : new LengthSampler(spec, rng).fill(new Int32Array(count));
  const inputLengths = sampled(source.input);
  const outputLengths = sampled(source.output);
  return makeSyntheticTable({
    inputTokens:
      source.input?.distribution === "fixed"
        ? source.input.value
        : Math.max(1, Math.round(source.inputTokens)),
    outputTokens:
      source.output?.distribution === "fixed"
        ? source.output.value
        : Math.max(0, Math.round(source.outputTokens)),
    requests: count,
    engineBlockSize,
    arrivals,
    inputLengths,
    outputLengths,
    timestampMs,
  });
}
