/** Host resources of a run: budget, preflight plan, process-tree RSS monitor (docs/resources.md). */
export { GB, type HostResources, probeHost, type ResourceBudget, resolveBudget } from "./budget.js";
export { ResourceLimited, ResourceRefusal, SupervisorTimeout } from "./errors.js";
export {
  DEFAULT_SAMPLE_INTERVAL_MS,
  descendantPids,
  type MonitorOptions,
  type MonitorReport,
  pidRssBytes,
  processPeakRssBytes,
  processTreeRss,
  ResourceMonitor,
  type TreeRss,
} from "./monitor.js";
export { PhaseClock, type PhaseLimits } from "./phases.js";
export {
  kvPoolBytes,
  MIB,
  measureWorkload,
  PLAN_COEFFICIENTS,
  type PlanOptions,
  plannedWorkerProcesses,
  planResources,
  type ResourcePlan,
  resourcePlanDocument,
  type WorkloadSize,
} from "./preflight.js";
export { type PhaseTimes, type ResourceHooks, resourceRuntimeDocument, type Termination } from "./runtime.js";
export { MAX_SAMPLES, scanTrace, type TraceSize } from "./traceScan.js";
