/** The router a run uses, resolved from the YAML `router` section (config/ builds it). */
/** Dynamo KV router knobs (`ai-dynamo/aisimulate@a2fa5bb:docs/replay/dynamo.md`, `ai-dynamo/dynamo@a4bdb9b:lib/kv-router/src/scheduling/selector/default.rs`). */
export interface KvRouterSpec {
  readonly policy: "kv_router";
  /** Credit per overlapping block, in blocks (0…1). */
  readonly overlapScoreCredit: number;
  /** Weight of the prefill term of the cost. */
  readonly prefillLoadScale: number;
  /** 0: lowest cost wins; > 0: softmax sampling over normalized costs. */
  readonly temperature: number;
  /** `aic`: each admitted request carries a predicted prefill duration that decays its prefill load. */
  readonly prefillLoadModel: "none" | "aic";
}

export type RouterSpec = { readonly policy: "round_robin" } | KvRouterSpec;
