import type { PoolTopology } from "../cluster/snapshot.js";
import type { ForwardPassMetrics } from "../planner/types.js";
import type { RouterCostParameters } from "../router/placement.js";

export type { LifecycleOperation, LifecycleTransition } from "../cluster/lifecycle.js";
export type { PoolTopology } from "../cluster/snapshot.js";

/**
 * Offered load and completed-request shapes since the previous tick (`ai-dynamo/dynamo@fdf4b3d:lib/mocker/src/replay/offline/planner_hook.rs` `traffic`):
 * `numReq` counts arrivals; ISL/OSL are sums over requests completed in the window, the KV hit
 * rate a sum of `overlap / prompt blocks` over the front router's KV-routed admissions in it
 * (`Cluster.takeRouterHitSample`; divide each by its count).
 */
export interface TrafficWindow {
  readonly durationS: number;
  readonly numReq: number;
  readonly shapeCount: number;
  readonly sumIsl: number;
  readonly sumOsl: number;
  readonly hitRateCount: number;
  readonly sumKvHitRate: number;
  /**
   * Speculative decoding (docs/speculation.md): sequence passes that verified drafts in the
   * window, and the tokens they emitted (the accept length is their ratio). 0 without speculation.
   */
  readonly acceptForwards: number;
  readonly acceptTokens: number;
}

/** A traffic window being filled (or merged into). */
export type MutableTrafficWindow = { -readonly [K in keyof TrafficWindow]: TrafficWindow[K] };

/** A window with nothing in it yet. */
export function emptyTrafficWindow(): MutableTrafficWindow {
  return {
    durationS: 0,
    numReq: 0,
    shapeCount: 0,
    sumIsl: 0,
    sumOsl: 0,
    hitRateCount: 0,
    sumKvHitRate: 0,
    acceptForwards: 0,
    acceptTokens: 0,
  };
}

/** What the scaling policy sees at a tick, after every other effect of that timestamp. */
export interface TickSnapshot {
  readonly tickOrdinal: number;
  readonly nowMs: number;
  /** Latest forward pass per (worker, rank) of ready workers; null for an aggregated deployment. */
  readonly prefillFpm: readonly ForwardPassMetrics[] | null;
  /** Decode pool (or the aggregated pool). */
  readonly decodeFpm: readonly ForwardPassMetrics[];
  readonly prefillTopology: PoolTopology | null;
  readonly decodeTopology: PoolTopology;
  readonly traffic: TrafficWindow;
}

/** The policy's answer: absolute targets (null = unchanged) and when to tick next (null = stop). */
export interface ScalingAction {
  readonly targetPrefill: number | null;
  readonly targetDecode: number | null;
  readonly nextTickMs: number | null;
  /**
   * Router cost parameters to patch into every KV router at this tick (retune's decision tick,
   * docs/retune.md §9); absent or null = unchanged.
   */
  readonly routerParameters?: RouterCostParameters | null;
}

/** A scaling policy driven by the replay (the Rust ↔ Python planner hook of `ai-dynamo/dynamo@fdf4b3d:lib/mocker/src/replay/offline/planner_hook.rs`). */
export interface ScalingPolicy {
  /** First tick time, ms; null for none. */
  initialTickMs(): number | null;
  onTick(snapshot: TickSnapshot): ScalingAction;
  /**
   * Asynchronous work the last tick started (a retune sweep), or null. The virtual clock stands
   * still until it settles: \`Replay.run\` awaits it before the next event; \`runSync\` refuses it.
   */
  pendingWork?(): Promise<void> | null;
  /** The replay was aborted (Ctrl-C): stop any work in flight now (a retune sweep's workers). */
  abort?(): void;
}
