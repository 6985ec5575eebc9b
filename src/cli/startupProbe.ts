/**
 * `FLEETSIM_STARTUP_PROBE=1`: predict prints one line to stderr when the replay's event loop
 * starts (the first simulated event is the next thing the process does), measured from the
 * process's start: `fleetsim: startup-probe {"cpu_ms":…,"max_rss_bytes":…,"wall_ms":…,
 * "code_cache":…}`. CPU is
 * user + system of the whole process since exec (getrusage); wall is `performance.now()` (from
 * Node's time origin, a few ms after exec); `code_cache` is what the bundle's V8 code cache did
 * (cli/codeCache.ts: `hit`, `miss`, `off`, or `none` outside the built CLI). `npm run bench` reads it (docs/performance.md); it
 * never reaches prediction.json or stdout. `FLEETSIM_STARTUP_PROBE=exit` prints the line and ends
 * the process there, exit code 0, nothing written: a measure of start-up alone
 * (`bench/instructions.ts --startup` counts its instructions).
 */
import { type CodeCacheState, codeCacheState } from "./codeCache.js";

export const STARTUP_PROBE_ENV = "FLEETSIM_STARTUP_PROBE";

export const STARTUP_PROBE_PREFIX = "fleetsim: startup-probe ";

export interface StartupProbe {
  readonly cpu_ms: number;
  readonly max_rss_bytes: number;
  readonly wall_ms: number;
  readonly code_cache: CodeCacheState;
}

/** The probe line (with its newline) when the environment asks for it, else null. */
export function startupProbeLine(env: NodeJS.ProcessEnv = process.env): string | null {
  const v = env[STARTUP_PROBE_ENV];
  if (v === undefined || v === "" || v === "0") return null;
  const usage = process.resourceUsage();
  const probe: StartupProbe = {
    cpu_ms: (usage.userCPUTime + usage.systemCPUTime) / 1000,
    max_rss_bytes: usage.maxRSS * 1024,
    wall_ms: performance.now(),
    code_cache: codeCacheState(),
  };
  return `${STARTUP_PROBE_PREFIX}${JSON.stringify(probe)}\n`;
}

/** Whether the environment asks the process to end once the probe line is printed (`exit`). */
export function startupProbeExits(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[STARTUP_PROBE_ENV] === "exit";
}
