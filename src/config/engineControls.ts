/**
 * The reference's engine-level model controls (`ai-dynamo/aisimulate@6e591c7:python/aisimulate/src/aisimulate/config/engine.py` (its newer engine-level controls),
 * `EstimatorPolicyConfig` in ai-dynamo/aisimulate's config) that fleetsim runs — `nextn` /
 * `nextn_accepted` (config/schema/speculation.ts) and `wideep_num_slots` (docs/models.md "Redundant
 * expert slots") — and the rule they share: the reference accepts them only with default timing
 * in every role ("engine model controls require default timing"), as AIConfigurator prices them.
 */
import type * as z from "zod";
import { fail, PATH, posInt, up } from "./schema/primitives.js";

/** `engine.wideep_num_slots`: physical expert slots per MoE layer (wide-EP/EPLB redundancy); null = one per expert. */
export const WideEpNumSlots = posInt().nullable().default(null);

export interface ControlledEngine {
  readonly wideep_num_slots: number | null;
  readonly workers: Readonly<Record<string, { readonly timing: { readonly type: string } } | undefined>>;
}

/** The first role (in key order) whose timing is not `default`, with its type; null when none. */
export function nonDefaultTiming(engine: ControlledEngine): { role: string; type: string } | null {
  for (const [role, worker] of Object.entries(engine.workers)) {
    if (worker !== undefined && worker.timing.type !== "default") return { role, type: worker.timing.type };
  }
  return null;
}

/**
 * Fails at `key` (relative to `engine`) when a role's timing is not `default`: `instead` says what
 * the user can do otherwise.
 */
export function requireDefaultTiming(
  engine: ControlledEngine,
  ctx: z.RefinementCtx,
  key: string,
  instead: string,
): void {
  const other = nonDefaultTiming(engine);
  if (other === null) return;
  fail(
    ctx,
    `${PATH} needs timing type 'default' in every role, as in the reference (AIConfigurator prices it); ` +
      `${up(1)}.workers.${other.role}.timing.type is '${other.type}'${instead}`,
    [key],
  );
}

/** The schema-level rule of `wideep_num_slots`; the model-dependent ones are config/resolve/engine.ts's. */
export function checkWideEpSlots(engine: ControlledEngine, ctx: z.RefinementCtx): void {
  if (engine.wideep_num_slots === null) return;
  requireDefaultTiming(engine, ctx, "wideep_num_slots", "");
}
