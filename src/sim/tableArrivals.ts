import type { LoadSpec } from "../config/runSpec.js";
import type { RequestTable } from "../traffic/requests.js";
import { ArrivalPlan, type Arrivals } from "./arrivals.js";
import { DagArrivals } from "./dagArrivals.js";

/** The arrivals of a materialized workload: its dependency graph if it has one, else its sessions. */
export function tableArrivals(table: RequestTable, load: LoadSpec): Arrivals {
  const deps = table.dependencies ?? null;
  return deps !== null ? new DagArrivals(table, deps, load) : new ArrivalPlan(table, load);
}
