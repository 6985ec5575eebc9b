/**
 * CPU pinning for `execution.resources.cpu_limit` (docs/resources.md §1a). The reference pins its
 * execution process and the sweep workers it starts to `cpu_limit` CPUs (seed 000 "Size the Run").
 * Node has no sched_setaffinity binding, so fleetsim asks util-linux `taskset` to set the affinity
 * of every thread of the running process (`taskset -a -p -c LIST PID`); processes forked later
 * (retune sweep workers) inherit it from the kernel. Linux only: elsewhere, or without taskset,
 * the limit is reported as not enforced.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

/** Parses a kernel CPU list such as `0-3,8,10-11` into ascending CPU numbers. */
export function parseCpuList(text: string): number[] {
  const cpus = new Set<number>();
  for (const part of text.trim().split(",")) {
    if (part === "") continue;
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (m === null) throw new Error(`internal: malformed CPU list '${text}'`);
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    for (let c = lo; c <= hi; c++) cpus.add(c);
  }
  return [...cpus].sort((a, b) => a - b);
}

/** Formats CPU numbers as a kernel CPU list (`[0,1,2,5]` → `0-2,5`). */
export function formatCpuList(cpus: readonly number[]): string {
  const sorted = [...new Set(cpus)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    parts.push(j === i ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(",");
}

/** The CPUs a process may run on (`Cpus_allowed_list` of /proc/PID/status), or null without /proc. */
export function readAllowedCpus(pid: number | "self" = "self"): number[] | null {
  try {
    const m = /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m === null ? null : parseCpuList(m[1]);
  } catch {
    return null;
  }
}

/**
 * What became of the CPU limit:
 * - `pinned`: this process and everything it starts later run on `cpus` only;
 * - `not_needed`: the limit is at least the CPUs the process may already use (`cpus`);
 * - `unavailable`: the affinity could not be set (`reason`);
 * - `in_process`: fleetsim runs inside another program (a test, the library API) and leaves that
 *   program's affinity alone.
 */
export interface CpuPinning {
  readonly status: "pinned" | "not_needed" | "unavailable" | "in_process";
  readonly cpus: string | null;
  readonly reason: string | null;
}

export const IN_PROCESS_PINNING: CpuPinning = {
  status: "in_process",
  cpus: null,
  reason: "fleetsim runs inside another program, whose CPU affinity it does not change",
};

/** Runs a command; replaceable in tests. Throws when the command cannot run or fails. */
export type CommandRunner = (file: string, args: readonly string[]) => void;

const runCommand: CommandRunner = (file, args) => {
  execFileSync(file, [...args], { stdio: ["ignore", "ignore", "pipe"], timeout: 10_000 });
};

/**
 * Restricts the current process (all its threads) to the first `limit` CPUs it may use now, so
 * that its sweep worker processes, forked later, inherit the restriction.
 */
export function pinCurrentProcess(
  limit: number,
  deps: { readAllowed?: () => number[] | null; run?: CommandRunner; pid?: number } = {},
): CpuPinning {
  const allowed = (deps.readAllowed ?? (() => readAllowedCpus("self")))();
  if (allowed === null || allowed.length === 0) {
    return {
      status: "unavailable",
      cpus: null,
      reason: "the process's CPU affinity cannot be read (no /proc)",
    };
  }
  if (limit >= allowed.length) {
    return { status: "not_needed", cpus: formatCpuList(allowed), reason: null };
  }
  const chosen = formatCpuList(allowed.slice(0, limit));
  try {
    (deps.run ?? runCommand)("taskset", ["-a", "-p", "-c", chosen, String(deps.pid ?? process.pid)]);
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: Buffer };
    const why =
      e.code === "ENOENT"
        ? "taskset (util-linux) was not found"
        : `taskset failed: ${(e.stderr?.toString() ?? e.message).trim()}`;
    return { status: "unavailable", cpus: null, reason: why };
  }
  return { status: "pinned", cpus: chosen, reason: null };
}
