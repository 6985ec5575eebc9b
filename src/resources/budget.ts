/**
 * The effective host budget of a run (`ai-dynamo/aisimulate@adc8645:docs/reference/local-resources.md`, docs/resources.md): how many bytes the
 * process tree may hold and how many CPUs it is meant to use. Pure arithmetic over a host probe,
 * so tests can pass any host.
 */
import { readFileSync } from "node:fs";
import { availableParallelism, freemem } from "node:os";
import type { ResourceSettings } from "../config/runSpec.js";

/** Decimal gigabyte: `memory_limit_gb` and `reserve_memory_gb` are in these units. */
export const GB = 1e9;

/** What the host offers at the start of a run. */
export interface HostResources {
  /** Available memory A, in bytes. */
  readonly availableMemoryBytes: number;
  /** Where A came from: `MemAvailable` of /proc/meminfo (Linux) or `os.freemem()` elsewhere. */
  readonly availableMemorySource: "meminfo" | "freemem";
  readonly cpuCount: number;
}

export interface ResourceBudget {
  /** The most resident memory the whole process tree may hold, in bytes. */
  readonly memoryBytes: number;
  /**
   * Host available memory that must remain during the run, in bytes:
   * `reserve_memory_gb·10⁹ + reserve_memory_fraction·A` (A at the start).
   */
  readonly reserveBytes: number;
  readonly memorySource: "explicit" | "auto";
  readonly cpuLimit: number;
  readonly cpuSource: "explicit" | "auto";
  readonly host: HostResources;
}

/**
 * Reads the host: A = `MemAvailable` from /proc/meminfo where readable (it counts reclaimable
 * page cache, as the reference's psutil `available` does), else `os.freemem()`; CPUs =
 * `os.availableParallelism()`.
 */
export function probeHost(): HostResources {
  const cpuCount = Math.max(1, availableParallelism());
  const meminfo = readMemAvailable();
  if (meminfo !== null) {
    return { availableMemoryBytes: meminfo, availableMemorySource: "meminfo", cpuCount };
  }
  return { availableMemoryBytes: freemem(), availableMemorySource: "freemem", cpuCount };
}

/** `MemAvailable` of /proc/meminfo in bytes, or null where it cannot be read (not Linux). */
export function readMemAvailable(): number | null {
  try {
    const text = readFileSync("/proc/meminfo", "utf8");
    const m = /^MemAvailable:\s+(\d+)\s*kB/m.exec(text);
    return m === null ? null : Number(m[1]) * 1024;
  } catch {
    return null;
  }
}

/**
 * memory: explicit `memory_limit_gb` × 10⁹, or auto =
 * `max(0, min(available_memory_fraction·A, A − reserve_memory_gb·10⁹) − reserve_memory_fraction·A)`
 * (with the defaults: `max(0, min(0.9·A, A − 1 GB))`).
 * cpu: explicit `cpu_limit`, or auto = host CPUs minus one (at least one), as seed 000 documents.
 */
export function resolveBudget(settings: ResourceSettings, host: HostResources): ResourceBudget {
  const a = Math.max(0, host.availableMemoryBytes);
  const memoryBytes =
    settings.memoryLimitGb === "auto"
      ? Math.max(
          0,
          Math.floor(
            Math.min(settings.availableMemoryFraction * a, a - settings.reserveMemoryGb * GB) -
              settings.reserveMemoryFraction * a,
          ),
        )
      : Math.round(settings.memoryLimitGb * GB);
  const cpuLimit = settings.cpuLimit === "auto" ? Math.max(1, host.cpuCount - 1) : settings.cpuLimit;
  return {
    memoryBytes,
    reserveBytes: Math.round(settings.reserveMemoryGb * GB + settings.reserveMemoryFraction * a),
    memorySource: settings.memoryLimitGb === "auto" ? "auto" : "explicit",
    cpuLimit,
    cpuSource: settings.cpuLimit === "auto" ? "auto" : "explicit",
    host,
  };
}
