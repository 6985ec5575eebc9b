/**
 * The non-numeric summary keys aisimulate 0.13 writes (docs/metrics.md "Provenance,
 * eviction and power"): what priced each role's passes, the prefix cache's eviction order, and
 * power, which fleetsim does not estimate. A deterministic function of the resolved spec.
 */
import { engineRoles, type RunSpec, type WorkerRoleSpec } from "../config/runSpec.js";
import type { KvCachePrecision, ReferenceSummaryKeys, RoleProvenance } from "../output/summary.js";
import { tableBackendOf, tableVersionOf } from "../timing/opTableSource.js";

export function referenceSummaryKeys(spec: RunSpec): ReferenceSummaryKeys {
  const roles = engineRoles(spec.engine);
  const provenance: Record<string, RoleProvenance> = {};
  for (const [name, role] of roles) provenance[name] = roleProvenance(role);
  const opLevel = roles.some(([, r]) => r.timing.type === "default");
  // The reference reports a role's KV precision only where its memory estimate ran: op-level
  // timing and `kv_cache.capacity.type: default` (aisimulate's predict.py reads it from the
  // role's memory diagnostics).
  const precision: Record<string, KvCachePrecision> = {};
  for (const [name, role] of roles) {
    const t = role.timing;
    if (t.type !== "default" || role.kvCapacityEstimate === undefined) continue;
    precision[name] = {
      dtype: t.model.kvDtype,
      source: t.model.kvFromCheckpoint ? "checkpoint" : "aisimulate_policy",
    };
  }
  return {
    kv_eviction_policy: "lru",
    power_w: null,
    // The op tables carry latency only: none of the priced time has energy evidence.
    power_coverage: opLevel ? 0 : null,
    prediction_provenance: provenance,
    ...(Object.keys(precision).length > 0 ? { kv_cache_precision: precision } : {}),
  };
}

function roleProvenance(role: WorkerRoleSpec): RoleProvenance {
  const t = role.timing;
  switch (t.type) {
    case "fixed":
      return unversioned("fixed", "configured", "configured timing does not use performance data");
    case "polynomial":
      return unversioned("polynomial", "built_in", "built-in timing does not use performance data");
    case "default": {
      const version = tableVersionOf(t, tableBackendOf(t, role.backend ?? "vllm"));
      return {
        estimator: "op_level",
        timing_source: "aic",
        data_version: version,
        data_version_unavailable_reason: version === null ? "read from timing.perf_database" : null,
        data_identity: null,
      };
    }
  }
}

function unversioned(
  estimator: RoleProvenance["estimator"],
  source: RoleProvenance["timing_source"],
  reason: string,
): RoleProvenance {
  return {
    estimator,
    timing_source: source,
    data_version: null,
    data_version_unavailable_reason: reason,
  };
}
