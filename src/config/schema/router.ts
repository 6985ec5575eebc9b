/**
 * `router` (`ai-dynamo/aisimulate@a2fa5bb:docs/replay/dynamo.md`): the Dynamo adapter's routing policy. The KV-router knobs are
 * rejected under `round_robin` rather than ignored (as the reference does), so a config never
 * appears to tune a router it does not use; under `kv_router` their defaults are filled in.
 */
import * as z from "zod";
import { fail, nonNegNum, PATH } from "./primitives.js";

/** Dynamo `KvRouterConfig` defaults (`ai-dynamo/dynamo@a4bdb9b:lib/kv-router/src/scheduling/selector/default.rs`). */
const KV_ROUTER_DEFAULTS = { overlap_score_credit: 1.0, prefill_load_scale: 1.0, temperature: 0.0 } as const;
const KV_ROUTER_KNOBS = Object.keys(KV_ROUTER_DEFAULTS) as (keyof typeof KV_ROUTER_DEFAULTS)[];

export const Router = z
  .strictObject({
    policy: z.enum(["round_robin", "kv_router"]).default("round_robin"),
    prefill_load_model: z.strictObject({ type: z.enum(["none", "aic"]).default("none") }).prefault({}),
    /** Credit per overlapping cached block: Dynamo accepts 0…1. */
    overlap_score_credit: z.number().min(0).max(1).optional(),
    prefill_load_scale: nonNegNum().optional(),
    temperature: nonNegNum().optional(),
  })
  .superRefine((router, ctx) => {
    if (router.policy !== "round_robin") return;
    if (router.prefill_load_model.type === "aic") {
      fail(
        ctx,
        `${PATH}: 'aic' is incompatible with router.policy='round_robin'; use policy='kv_router' or type='none'`,
        ["prefill_load_model", "type"],
      );
    }
    for (const knob of KV_ROUTER_KNOBS) {
      const value = router[knob];
      if (value !== undefined) {
        fail(
          ctx,
          `${PATH}: ${value} is incompatible with router.policy='round_robin'; use policy='kv_router' or remove ${PATH}`,
          [knob],
        );
      }
    }
  })
  .transform((router) =>
    router.policy === "round_robin"
      ? { policy: router.policy, prefill_load_model: router.prefill_load_model }
      : {
          policy: router.policy,
          prefill_load_model: router.prefill_load_model,
          overlap_score_credit: router.overlap_score_credit ?? KV_ROUTER_DEFAULTS.overlap_score_credit,
          prefill_load_scale: router.prefill_load_scale ?? KV_ROUTER_DEFAULTS.prefill_load_scale,
          temperature: router.temperature ?? KV_ROUTER_DEFAULTS.temperature,
        },
  );

export type RouterConfig = z.output<typeof Router>;
