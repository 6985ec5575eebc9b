import type { Cluster } from "../cluster/cluster.js";
import { fpmOf, topologyOf } from "../cluster/snapshot.js";
import { emptyTrafficWindow, type TickSnapshot, type TrafficWindow } from "./scaling.js";

/**
 * What a scaling tick sees (`ai-dynamo/dynamo@fdf4b3d:lib/mocker/src/replay/offline/planner_hook.rs`): the replay feeds it arrivals and completions as
 * they happen, and at each tick it closes the traffic window and reads the forward-pass metrics
 * and topology of the cluster's pools.
 */
export class TickObserver {
  private ordinal = 0;
  private traffic = emptyTrafficWindow();
  private sinceMs = 0;

  onArrival(): void {
    this.traffic.numReq++;
  }

  /** A request of `isl` prompt tokens completed with `tokens` output tokens. */
  onCompleted(isl: number, tokens: number): void {
    const w = this.traffic;
    w.shapeCount++;
    w.sumIsl += isl;
    w.sumOsl += tokens;
  }

  /** The snapshot of tick `t`; starts the next traffic window. */
  snapshot(cluster: Cluster, t: number): TickSnapshot {
    const accept = cluster.takeAcceptSample();
    // The KV hit rate is the router's view at admission, not the engines' reuse.
    const hits = cluster.takeRouterHitSample();
    const window: TrafficWindow = {
      ...this.traffic,
      hitRateCount: hits.count,
      sumKvHitRate: hits.sum,
      durationS: (t - this.sinceMs) / 1000,
      acceptForwards: accept.forwards,
      acceptTokens: accept.tokens,
    };
    const prefill = cluster.prefillPool;
    const decode = cluster.decodePool;
    const snapshot: TickSnapshot = {
      tickOrdinal: this.ordinal++,
      nowMs: t,
      prefillFpm: prefill === null ? null : fpmOf(prefill, t),
      decodeFpm: fpmOf(decode, t),
      prefillTopology: prefill === null ? null : topologyOf(prefill),
      decodeTopology: topologyOf(decode),
      traffic: window,
    };
    this.traffic = emptyTrafficWindow();
    this.sinceMs = t;
    return snapshot;
  }
}
