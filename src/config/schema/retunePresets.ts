/**
 * Default domains of the KV-router knobs retune searches (the recommend defaults,
 * `ai-dynamo/aisimulate@a2fa5bb:docs/replay/dynamo.md`). The Planner knobs' default domains are rows of knobs/planner.ts, their presets in
 * planner/retune/presets.ts.
 */

/** Default domains of the KV-router knobs (the recommend defaults, `ai-dynamo/aisimulate@a2fa5bb:docs/replay/dynamo.md`). */
export const ROUTER_DEFAULT_DOMAINS = {
  overlap_score_credit: [0.0, 0.5, 1.0],
  prefill_load_scale: [0, 0.25, 0.5, 1, 2, 4, 8, 16, 32],
  temperature: [0.0, 0.2, 0.5, 1.0],
} as const;
