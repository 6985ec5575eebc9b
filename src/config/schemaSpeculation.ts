/**
 * `engine.speculation` (aisimulate.md §2.2, §2.10; docs/speculation.md): speculative decoding of
 * every worker. The reference's block is `{kind: ngram, num_speculative_tokens: 1..5,
 * acceptance_rates: [r1..rK] each in [0, 1], seed: 42}`; fleetsim adds `kind: mtp` (a one-layer
 * draft head priced by the op-level model) and a single rate as shorthand for K equal ones.
 */
import * as z from "zod";
import { describeValue, fail, int, nonNegInt, oneOf, PATH } from "./schemaPrimitives.js";

/** Draft tokens per pass the reference allows (`aic_nextn` 1..=5, mocker.md §1.1). */
export const MAX_SPECULATIVE_TOKENS = 5;

/** The reference's default seed of the acceptance draws (`aic_mtp_seed`, mocker.md §4.7). */
export const DEFAULT_SPECULATION_SEED = 42;

const RATE_RULE = "a number in [0, 1]";

/** One conditional acceptance rate. */
const Rate = z
  .number()
  .min(0, { error: (iss) => `${PATH} must be ${RATE_RULE}, got ${describeValue(iss.input)}` })
  .max(1, { error: (iss) => `${PATH} must be ${RATE_RULE}, got ${describeValue(iss.input)}` });

/** A rate per draft position, or one rate for all of them. */
const Rates = z.union([Rate, z.array(Rate).min(1, { error: `${PATH} must list at least one rate` })], {
  error: (iss) =>
    iss.input === undefined
      ? "Field required"
      : `Input should be ${RATE_RULE} or a list of them, got ${describeValue(iss.input)}`,
});

export const Speculation = z
  .strictObject({
    /** `ngram` (the reference's only kind), `mtp` (fleetsim extension). */
    kind: oneOf(["ngram", "mtp", "draft_model", "eagle"], ["ngram", "mtp"]).default("ngram"),
    num_speculative_tokens: int()
      .min(1, { error: `Input should be an integer in 1..${MAX_SPECULATIVE_TOKENS}` })
      .max(MAX_SPECULATIVE_TOKENS, { error: `Input should be an integer in 1..${MAX_SPECULATIVE_TOKENS}` }),
    /**
     * Conditional acceptance rate of each draft position (entry i: draft i is accepted given that
     * every earlier one was), K entries; one number = the same rate at every position.
     */
    acceptance_rates: Rates,
    seed: nonNegInt().default(DEFAULT_SPECULATION_SEED),
  })
  .superRefine((s, ctx) => {
    const rates = s.acceptance_rates;
    if (Array.isArray(rates) && rates.length !== s.num_speculative_tokens) {
      fail(
        ctx,
        `${PATH} must list one rate per draft position: num_speculative_tokens is ` +
          `${s.num_speculative_tokens}, got ${rates.length} rate${rates.length === 1 ? "" : "s"}`,
        ["acceptance_rates"],
      );
    }
  })
  .transform((s) => ({
    kind: s.kind,
    num_speculative_tokens: s.num_speculative_tokens,
    acceptance_rates: Array.isArray(s.acceptance_rates)
      ? s.acceptance_rates
      : new Array<number>(s.num_speculative_tokens).fill(s.acceptance_rates),
    seed: s.seed,
  }));

export type SpeculationConfig = z.output<typeof Speculation>;
