/**
 * `engine.speculation` (`ai-dynamo/aisimulate@6e591c7:python/aisimulate/src/aisimulate/config/engine.py`, `ai-dynamo/aisimulate@3942c28:python/aisimulate/src/aisimulate/main.py`; docs/speculation.md): speculative decoding of
 * every worker. The reference's block is `{kind: ngram, num_speculative_tokens: 1..5,
 * acceptance_rates: [r1..rK] each in [0, 1], seed: 42}`; fleetsim adds `kind: mtp` (a one-layer
 * draft head priced by the op-level model) and a single rate as shorthand for K equal ones.
 */
import * as z from "zod";
import { type ControlledEngine, requireDefaultTiming } from "../engineControls.js";
import { describeValue, fail, int, nonNegInt, oneOf, PATH, up } from "./primitives.js";

/** Draft tokens per pass the reference allows (`aic_nextn` 1..=5, `ai-dynamo/dynamo@57040c1:lib/mocker/src/common/protocols.rs`). */
export const MAX_SPECULATIVE_TOKENS = 5;

/** The reference's default seed of the acceptance draws (`aic_mtp_seed`, `ai-dynamo/aisimulate@6f9a315:crates/core/src/replay/README.md`). */
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

/**
 * `engine.nextn` / `engine.nextn_accepted` (`ai-dynamo/aisimulate@6e591c7:python/aisimulate/src/aisimulate/config/engine.py` (its newer engine-level controls);
 * AIConfigurator's MTP inputs): `nextn` MTP drafts per decode step, `nextn_accepted` the mean of
 * them accepted per step (AIConfigurator: a step makes `1 + nextn_accepted` tokens of progress).
 * The reference's replay lowers the pair to MTP burst sampling with the conditional rates of
 * `nextnAcceptanceRates`; fleetsim does the same onto its `kind: mtp` speculation
 * (docs/speculation.md "`engine.nextn`"). 0 = off.
 */
export const Nextn = int()
  .min(0, { error: `Input should be an integer in 0..${MAX_SPECULATIVE_TOKENS}` })
  .max(MAX_SPECULATIVE_TOKENS, { error: `Input should be an integer in 0..${MAX_SPECULATIVE_TOKENS}` })
  .default(0);

/** Mean accepted draft tokens per step, in [0, nextn]; required exactly when `nextn` > 0. */
export const NextnAccepted = z.number().min(0).nullable().default(null);

/**
 * Conditional per-position rates whose expected accepted drafts are `accepted` (≤ `nextn`): the
 * first ⌊accepted⌋ drafts always accepted, the next one with the fractional part, the rest never
 * — the reference's lowering (ai-dynamo/dynamo replay config: nextn 3, accepted 2.4 → 1, 1, 0.4).
 */
export function nextnAcceptanceRates(nextn: number, accepted: number): number[] {
  const whole = Math.floor(accepted);
  const rates = new Array<number>(nextn).fill(0);
  for (let i = 0; i < nextn; i++) {
    if (i < whole) rates[i] = 1;
    else if (i === whole) rates[i] = accepted - whole;
  }
  return rates;
}

interface NextnShape extends ControlledEngine {
  readonly backend: string;
  readonly nextn: number;
  readonly nextn_accepted: number | null;
  readonly speculation?: unknown;
  readonly workers: Readonly<
    Record<
      string,
      | {
          readonly timing: { readonly type: string };
          readonly sglang?: { readonly enable_mixed_chunk?: boolean };
        }
      | undefined
    >
  >;
}

/**
 * The engine-level rules of `nextn` (issue paths relative to `engine`): the reference's own
 * (accepted required with a depth, within [0, nextn], not with `speculation`, default timing in
 * every role) and SGLang's (no mixed chunk on a speculating role: SGLang turns it off).
 */
export function checkNextn(engine: NextnShape, ctx: z.RefinementCtx): void {
  const { nextn, nextn_accepted: accepted } = engine;
  if (nextn === 0) {
    if (accepted !== null) {
      fail(ctx, `${PATH} requires ${up(1)}.nextn > 0 (it is the mean accepted of the nextn MTP drafts)`, [
        "nextn_accepted",
      ]);
    }
    return;
  }
  if (accepted === null) {
    fail(
      ctx,
      `${PATH}=${nextn} requires ${up(1)}.nextn_accepted, the mean accepted draft tokens per step in ` +
        `[0, ${nextn}] (the reference assumes no acceptance either)`,
      ["nextn"],
    );
    return;
  }
  if (accepted > nextn) {
    fail(ctx, `${PATH} (${accepted}) must be within [0, ${up(1)}.nextn] = [0, ${nextn}]`, ["nextn_accepted"]);
    return;
  }
  if (engine.speculation !== undefined && engine.speculation !== null) {
    fail(
      ctx,
      `${PATH} cannot be combined with ${up(1)}.speculation (the reference rejects it too): both turn on speculative decoding; use one`,
      ["nextn"],
    );
    return;
  }
  for (const [name, role] of Object.entries(engine.workers)) {
    // SGLang's server args turn `--enable-mixed-chunk` off under speculative decoding ("Mixed
    // chunked prefill is disabled because of using eagle speculative decoding"); a prefill worker
    // never speculates, so it keeps it.
    if (name === "prefill" || role?.sglang?.enable_mixed_chunk !== true) continue;
    fail(
      ctx,
      `${PATH}=true cannot be combined with engine.nextn: SGLang turns mixed chunked prefill off under ` +
        "speculative decoding; set it false, or drop engine.nextn",
      ["workers", name, "sglang", "enable_mixed_chunk"],
    );
    return;
  }
  requireDefaultTiming(engine, ctx, "nextn", " (engine.speculation with kind 'mtp' runs with any timing)");
}
