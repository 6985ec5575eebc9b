/**
 * The recommend-only sections (`ai-dynamo/aisimulate@074bddc:python/aisimulate/src/aisimulate/config/common.py`): `optimization` (what "better" means, the
 * SLA filter and the candidate GPU budget) and `optimizer` (the search controls). Both are pinned,
 * never searched. Cross-section rules that need the rest of the document (an SLA for goodput
 * targets, `hardware: auto`) are checked by the recommend command, which sees both.
 */
import * as z from "zod";
import { fail, nonNegInt, PATH, posInt, posNum } from "./primitives.js";

/** Scalar targets and their direction; `pareto` is the fixed two-objective frontier. */
export const OPTIMIZATION_TARGETS = [
  "throughput",
  "throughput_per_gpu",
  "throughput_per_user",
  "goodput",
  "goodput_per_gpu",
  "ttft",
  "e2e_latency",
  "min_gpus",
  "pareto",
  // fleetsim extension (docs/cost.md): the cheapest candidate per good request under the SLA.
  "cost_per_good_request",
] as const;
export type OptimizationTarget = (typeof OPTIMIZATION_TARGETS)[number];

/** Targets whose metric counts only requests that meet `evaluation.sla`. */
export const SLA_TARGETS: ReadonlySet<OptimizationTarget> = new Set([
  "goodput",
  "goodput_per_gpu",
  "min_gpus",
  "cost_per_good_request",
]);

const Constraints = z
  .strictObject({
    min_candidate_gpus: posInt().nullable().default(null),
    max_candidate_gpus: posInt().default(32),
    min_goodput_rps: posNum().nullable().default(null),
  })
  .superRefine((c, ctx) => {
    if (c.min_candidate_gpus !== null && c.min_candidate_gpus > c.max_candidate_gpus) {
      fail(
        ctx,
        `${PATH} (${c.min_candidate_gpus}) must be no greater than max_candidate_gpus (${c.max_candidate_gpus})`,
        ["min_candidate_gpus"],
      );
    }
  });

export const Optimization = z
  .strictObject({
    target: z.enum(OPTIMIZATION_TARGETS).default("throughput"),
    hardware: z.string().min(1).nullable().default(null),
    strict_sla: z.boolean().default(false),
    constraints: Constraints.prefault({}),
  })
  .superRefine((o, ctx) => {
    if (o.hardware === "auto") fail(ctx, `${PATH} must name one GPU system, not 'auto'`, ["hardware"]);
    if (o.constraints.min_goodput_rps !== null && o.target !== "min_gpus") {
      fail(ctx, `${PATH} applies to optimization.target='min_gpus' only`, ["constraints", "min_goodput_rps"]);
    }
  });

export const Optimizer = z.strictObject({
  algorithm: z.enum(["bayesian", "random"]).default("bayesian"),
  max_trials: posInt().max(100_000, { error: "Input should be at most 100000 (trials)" }).default(320),
  parallelism: posInt().max(1024, { error: "Input should be at most 1024 (parallel trials)" }).default(16),
  candidate_timeout_seconds: posNum().default(600),
  seed: nonNegInt().max(Number.MAX_SAFE_INTEGER).default(42),
});

export type OptimizationConfig = z.output<typeof Optimization>;
export type OptimizerConfig = z.output<typeof Optimizer>;
