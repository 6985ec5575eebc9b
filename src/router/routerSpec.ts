/** The router a run uses, resolved from the YAML `router` section (config/ builds it). */
/** Dynamo KV router knobs (aisimulate.md §2.3, mocker.md §5.1). */
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
