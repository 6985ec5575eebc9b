/**
 * `engine.speculation` → every role's `WorkerRoleSpec.speculation` (docs/speculation.md): the
 * reference's block, its defaults, the one-rate shorthand, null = off, and the depth the Planner
 * reads from the workers' capabilities (planner.md §4.4). Bad values: test/config/rules.test.ts.
 */
import { describe, expect, it } from "vitest";
import type { AggregatedEngineSpec, DisaggregatedEngineSpec } from "../../src/config/runSpec.js";
import { capabilitiesOf } from "../../src/sim/plannerSetup.js";
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
