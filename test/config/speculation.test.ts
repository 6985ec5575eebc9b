/**
 * `engine.speculation` → every role's `WorkerRoleSpec.speculation` (docs/speculation.md): the
 * reference's block, its defaults, the one-rate shorthand, null = off, and the depth the Planner
 * reads from the workers' capabilities (`ai-dynamo/dynamo@4d3f672:components/src/dynamo/planner/core/throughput_scaling.py`). Bad values: test/config/rules.test.ts.
 */
import { describe, expect, it } from "vitest";
import { capabilitiesOf } from "../../src/autoscale/plannerSetup.js";
import type { AggregatedEngineSpec, DisaggregatedEngineSpec } from "../../src/config/runSpec.js";
import { nextnAcceptanceRates } from "../../src/config/schema/speculation.js";
import { expectedAcceptLength } from "../../src/engine/speculation.js";
import { loadYaml, RUNNABLE_ENGINE, RUNNABLE_PD_ENGINE } from "../helpers/configHelpers.js";

const aggregated = (sets: string[]) =>
  (loadYaml(RUNNABLE_ENGINE, { sets }).engine as AggregatedEngineSpec).aggregated;

describe("engine.speculation", () => {
  it("the reference's block reaches the role as given", () => {
    const role = aggregated([
      "engine.speculation={kind: ngram, num_speculative_tokens: 3, acceptance_rates: [0.8, 0.6, 0.4], seed: 7}",
    ]);
    expect(role.speculation).toEqual({
      kind: "ngram",
      numSpeculativeTokens: 3,
      acceptanceRates: [0.8, 0.6, 0.4],
      seed: 7,
    });
    expect(capabilitiesOf(role).speculativeNextn).toBe(3);
  });

  it("defaults: kind ngram, seed 42; one rate stands for every position; mtp is accepted", () => {
    expect(
      aggregated(["engine.speculation={num_speculative_tokens: 2, acceptance_rates: 0.75}"]).speculation,
    ).toEqual({
      kind: "ngram",
      numSpeculativeTokens: 2,
      acceptanceRates: [0.75, 0.75],
      seed: 42,
    });
    expect(
      aggregated(["engine.speculation={kind: mtp, num_speculative_tokens: 1, acceptance_rates: [1]}"])
        .speculation?.kind,
    ).toBe("mtp");
  });

  it("absent or null: off, and the role spec has no speculation key at all", () => {
    for (const sets of [[], ["engine.speculation=null"]]) {
      const role = aggregated(sets);
      expect(Object.hasOwn(role, "speculation")).toBe(false);
      expect(capabilitiesOf(role).speculativeNextn).toBe(0);
    }
  });

  it("disaggregated: both roles carry it (the prefill engines ignore it)", () => {
    const engine = loadYaml(RUNNABLE_PD_ENGINE, {
      sets: ["engine.speculation={num_speculative_tokens: 4, acceptance_rates: 0.5}"],
    }).engine as DisaggregatedEngineSpec;
    expect(engine.prefill.speculation?.numSpeculativeTokens).toBe(4);
    expect(engine.decode.speculation?.numSpeculativeTokens).toBe(4);
  });
});

describe("engine.nextn / engine.nextn_accepted (the reference's MTP controls)", () => {
  const opLevel = (sets: string[]) =>
    aggregated(["engine.workers.aggregated.timing={type: default}", ...sets]);

  it("lower to MTP speculation: ⌊accepted⌋ drafts always accepted, the next with the fraction (3, 2.4 → 1, 1, 0.4)", () => {
    const role = opLevel(["engine.nextn=3", "engine.nextn_accepted=2.4"]);
    expect(role.speculation?.kind).toBe("mtp");
    expect(role.speculation?.numSpeculativeTokens).toBe(3);
    expect(role.speculation?.seed).toBe(42);
    const rates = role.speculation!.acceptanceRates;
    expect(rates[0]).toBe(1);
    expect(rates[1]).toBe(1);
    expect(rates[2]).toBeCloseTo(0.4, 12);
    // The expected accepted drafts per step are exactly nextn_accepted.
    expect(expectedAcceptLength(rates) - 1).toBeCloseTo(2.4, 12);
    expect(capabilitiesOf(role).speculativeNextn).toBe(3);
  });

  it("the ends: accepted 0 never accepts, accepted = nextn always does, a fraction below 1 is the first rate", () => {
    expect(nextnAcceptanceRates(2, 0)).toEqual([0, 0]);
    expect(nextnAcceptanceRates(2, 2)).toEqual([1, 1]);
    expect(nextnAcceptanceRates(3, 0.85)).toEqual([0.85, 0, 0]);
    expect(nextnAcceptanceRates(1, 1)).toEqual([1]);
  });

  it("nextn 0 (the default) is off, and its role spec has no speculation key", () => {
    for (const sets of [[], ["engine.nextn=0"]]) {
      const role = opLevel(sets);
      expect(Object.hasOwn(role, "speculation")).toBe(false);
    }
  });

  it("TRT-LLM accepts it (the vLLM core speculates); both roles of a disaggregated run carry it", () => {
    expect(
      opLevel(["engine.backend=trtllm", "engine.nextn=1", "engine.nextn_accepted=0.7"]).speculation?.kind,
    ).toBe("mtp");
    const engine = loadYaml(RUNNABLE_PD_ENGINE.replaceAll("{type: polynomial}", "{type: default}"), {
      sets: ["engine.nextn=2", "engine.nextn_accepted=1.5"],
    }).engine as DisaggregatedEngineSpec;
    expect(engine.decode.speculation?.acceptanceRates).toEqual([1, 0.5]);
    expect(engine.prefill.speculation?.numSpeculativeTokens).toBe(2);
  });

  it("SGLang accepts it (its core speculates, as the reference's SGLang mocker does), in both modes", () => {
    const role = opLevel(["engine.backend=sglang", "engine.nextn=3", "engine.nextn_accepted=2.4"]);
    expect(role.backend).toBe("sglang");
    expect(role.speculation).toEqual({
      kind: "mtp",
      numSpeculativeTokens: 3,
      acceptanceRates: nextnAcceptanceRates(3, 2.4),
      seed: 42,
    });
    // Mixed chunk set false explicitly, and the overlap scheduler, go with it.
    const both = opLevel([
      "engine.backend=sglang",
      "engine.nextn=1",
      "engine.nextn_accepted=0.5",
      "engine.workers.aggregated.sglang={enable_mixed_chunk: false}",
      "engine.workers.aggregated.scheduler.async_scheduling=true",
    ]);
    expect(both.sglang?.enableMixedChunk).toBe(false);
    expect(both.asyncScheduling).toBe(true);
    expect(both.speculation?.numSpeculativeTokens).toBe(1);
    // Disaggregated: a prefill role keeps its mixed chunk (a prefill worker never speculates).
    const engine = loadYaml(RUNNABLE_PD_ENGINE.replaceAll("{type: polynomial}", "{type: default}"), {
      sets: [
        "engine.backend=sglang",
        "engine.nextn=2",
        "engine.nextn_accepted=1.5",
        "engine.workers.prefill.sglang={enable_mixed_chunk: true}",
      ],
    }).engine as DisaggregatedEngineSpec;
    expect(engine.decode.speculation?.acceptanceRates).toEqual([1, 0.5]);
    expect(engine.prefill.sglang?.enableMixedChunk).toBe(true);
  });
});
