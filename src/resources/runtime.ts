/** The `resource-runtime.json` document and the test hooks of the resource supervision. */
import type { HostResources, ResourceBudget } from "./budget.js";
import { type CpuPinning, formatCpuList } from "./cpuAffinity.js";
import type { MonitorReport } from "./monitor.js";

export type Termination =
  | "completed"
  | "resource_limited"
  | "failed"
  | "initialization_timeout"
  | "shutdown_timeout";

/**
 * The supervised phases (docs/resources.md §3): their limits and the wall-clock seconds they took,
 * null for a phase that was not reached.
 */
export interface PhaseTimes {
  readonly initializationSeconds: number | null;
  readonly initializationTimeoutSeconds: number;
  readonly shutdownSeconds: number | null;
  readonly shutdownTimeoutSeconds: number;
}

/** Injection points for tests; production passes none. */
export interface ResourceHooks {
  /** Replaces the host probe (budget arithmetic over a fixed host). */
  readonly host?: HostResources;
  /** Budget the runtime monitor enforces instead of the resolved one (the preflight still uses the resolved one). */
  readonly runtimeBudgetBytes?: number;
  readonly sampleIntervalMs?: number;
  /** Replaces the host available-memory reading the reserve is checked against. */
  readonly availableMemory?: () => number | null;
  /**
   * Awaited during start-up, before the workload is loaded: lets a test stall start-up to show
   * that the start-up watchdog stops the run without waiting for start-up to end.
   */
  readonly startupStall?: () => Promise<void>;
}

export function resourceRuntimeDocument(
  budget: ResourceBudget,
  report: MonitorReport,
  termination: Termination,
  phases: PhaseTimes,
  pinning: CpuPinning,
): Record<string, unknown> {
  return {
    budget_bytes: report.budgetBytes,
    memory_limit_source: budget.memorySource,
    available_memory_bytes: budget.host.availableMemoryBytes,
    available_memory_source: budget.host.availableMemorySource,
    cpu_limit: budget.cpuLimit,
    cpu_pinning: pinning.status,
    cpu_affinity: pinning.cpus,
    cpu_pinning_reason: pinning.reason,
    worker_cpu_affinity: report.descendantCpus === null ? null : formatCpuList(report.descendantCpus),
    host_cpu_count: budget.host.cpuCount,
    peak_observed_rss_bytes: report.peakObservedRssBytes,
    peak_sampled_rss_bytes: report.peakSampledRssBytes,
    peak_process_rss_bytes: report.peakProcessRssBytes,
    preflight_estimated_bytes: report.estimatedBytes,
    exceeded_at_rss_bytes: report.exceededAtBytes,
    exceeded_reason: report.exceededReason,
    reserve_bytes: report.reserveBytes,
    min_available_memory_bytes: report.minAvailableMemoryBytes,
    killed_pids: report.killedPids.length,
    sample_interval_ms: report.intervalMs,
    samples: report.samples,
    initialization_seconds: phases.initializationSeconds,
    initialization_timeout_seconds: phases.initializationTimeoutSeconds,
    shutdown_seconds: phases.shutdownSeconds,
    shutdown_timeout_seconds: phases.shutdownTimeoutSeconds,
    termination,
  };
}
