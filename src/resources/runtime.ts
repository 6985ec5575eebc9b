/** The `resource-runtime.json` document and the test hooks of the resource supervision. */
import type { HostResources, ResourceBudget } from "./budget.js";
import type { MonitorReport } from "./monitor.js";

export type Termination = "completed" | "resource_limited" | "failed";

/** Injection points for tests; production passes none. */
export interface ResourceHooks {
  /** Replaces the host probe (budget arithmetic over a fixed host). */
  readonly host?: HostResources;
  /** Budget the runtime monitor enforces instead of the resolved one (the preflight still uses the resolved one). */
  readonly runtimeBudgetBytes?: number;
  readonly sampleIntervalMs?: number;
}

export function resourceRuntimeDocument(
  budget: ResourceBudget,
  report: MonitorReport,
  termination: Termination,
): Record<string, unknown> {
  return {
    budget_bytes: report.budgetBytes,
    memory_limit_source: budget.memorySource,
    available_memory_bytes: budget.host.availableMemoryBytes,
    available_memory_source: budget.host.availableMemorySource,
    cpu_limit: budget.cpuLimit,
    host_cpu_count: budget.host.cpuCount,
    peak_observed_rss_bytes: report.peakObservedRssBytes,
    exceeded_at_rss_bytes: report.exceededAtBytes,
    killed_pids: report.killedPids.length,
    sample_interval_ms: report.intervalMs,
    samples: report.samples,
    termination,
  };
}
