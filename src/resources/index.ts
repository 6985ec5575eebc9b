/** Host resources of a run: budget, preflight plan, process-tree RSS monitor (docs/resources.md). */
export { GB, type HostResources, probeHost, type ResourceBudget, resolveBudget } from "./budget.js";
export { ResourceLimited, ResourceRefusal, SupervisorTimeout } from "./errors.js";
export {
  DEFAULT_SAMPLE_INTERVAL_MS,
  descendantPids,
  type MonitorOptions,
  type MonitorReport,
  pidRssBytes,
  processTreeRss,
  ResourceMonitor,
  type TreeRss,
} from "./monitor.js";
export { PhaseClock, type PhaseLimits } from "./phases.js";
export {
  MIB,
  PLAN_OVERHEAD_BYTES,
  PLAN_TRACE_FACTOR,
  PLAN_WORKER_BYTES,
  plannedWorkerProcesses,
  planResources,
  type ResourcePlan,
  resourcePlanDocument,
  traceFileBytes,
} from "./preflight.js";
export { type PhaseTimes, type ResourceHooks, resourceRuntimeDocument, type Termination } from "./runtime.js";
