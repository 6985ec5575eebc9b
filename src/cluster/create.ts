import type { EngineSpec, RouterSpec, WorkerRoleSpec } from "../config/runSpec.js";
import type { RoleTimings } from "../timing/index.js";
import { AggregatedCluster } from "./aggregated.js";
import type { Cluster, ClusterContext } from "./cluster.js";
import { DisaggregatedCluster } from "./disaggregated.js";

/** The worker roles of a deployment, front pool first; two roles mean a prefill → decode hand-off. */
export function deploymentRoles(engine: EngineSpec): readonly WorkerRoleSpec[] {
  return engine.mode === "aggregated" ? [engine.aggregated] : [engine.prefill, engine.decode];
}

/** The topology of `engine`: the one place that asks which mode a deployment runs in. */
export function createCluster(
  ctx: ClusterContext,
  engine: EngineSpec,
  timings: RoleTimings,
  router: RouterSpec,
): Cluster {
  if (engine.mode === "aggregated" && timings.mode === "aggregated") {
    return new AggregatedCluster(ctx, engine.aggregated, timings.aggregated, router);
  }
  if (engine.mode === "disaggregated" && timings.mode === "disaggregated") {
    return new DisaggregatedCluster(
      ctx,
      { role: engine.prefill, timing: timings.prefill },
      { role: engine.decode, timing: timings.decode },
      router,
      engine.kvTransfer,
    );
  }
  throw new Error("internal: timing models do not match the engine mode");
}
