/**
 * Retune sweeps under failure (issue 13 §9): a sweep worker killed mid-job leaves its candidate
 * in `failed_candidates` with the reason, and an abort (Ctrl-C) mid-sweep lands at once instead
 * of after the sweep.
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { runPrediction } from "../../../src/pipeline/index.js";
import type { RetuneEventRecord } from "../../../src/planner/retune/index.js";
import { ReplayAborted } from "../../../src/sim/replay.js";
import { loadYaml, RUNNABLE_ENGINE } from "../../helpers/configHelpers.js";
import { dynamoTrace } from "../../helpers/dynamoTraces.js";
import { retuneYaml, SCENARIO1_RETUNE, SCENARIO1_SLA } from "../../helpers/retuneProject.js";

const TRACE = { "trace.jsonl": dynamoTrace(110, 60) };

const CONFIG = retuneYaml(RUNNABLE_ENGINE, SCENARIO1_RETUNE, SCENARIO1_SLA);

const spec = () =>
  loadYaml(CONFIG, { files: TRACE, sets: ["engine.workers.aggregated.parallelism.replicas=3"] });

/** Child processes of this process (the sweep's workers), from /proc. */
function children(): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // pid (comm) state ppid …: comm may hold spaces, so split after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === process.pid) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Calls `f(pid)` once for the first child process that appears. */
function onFirstChild(f: (pid: number) => void): () => void {
  const timer = setInterval(() => {
    const [pid] = children();
    if (pid !== undefined) {
      clearInterval(timer);
      f(pid);
    }
  }, 5);
  return () => clearInterval(timer);
}

describe("retune sweeps under failure", () => {
  it("a sweep worker killed mid-job: its candidate is listed as failed with the reason", async () => {
    const stop = onFirstChild((pid) => setTimeout(() => process.kill(pid, "SIGKILL"), 300));
    const out = await runPrediction(spec(), { capturePerRequest: false }).finally(stop);
    const events = (out.prediction.planner?.retune_events ?? []) as RetuneEventRecord[];
    const failed = events.flatMap((e) => e.failed_candidates);
    expect(failed.length).toBeGreaterThanOrEqual(1);
    expect(failed[0][1]).toMatch(/worker exited \(SIGKILL\) while running the job/);
    // The other candidates of that sweep still ran (a replacement worker took the queue).
    const hit = events.find((e) => e.failed_candidates.length > 0)!;
    expect(hit.failed_candidates.length).toBeLessThan(hit.num_candidates);
  }, 120_000);

  it("an abort mid-sweep stops the sweep's workers and lands within a few seconds", async () => {
    let abortedAt = 0;
    let replay: { abort(): void } | null = null;
    const stop = onFirstChild(() => {
      setTimeout(() => {
        abortedAt = performance.now();
        replay?.abort();
      }, 300);
    });
    await expect(
      runPrediction(spec(), { capturePerRequest: false }, { onStart: (r) => (replay = r) }).finally(stop),
    ).rejects.toBeInstanceOf(ReplayAborted);
    expect(abortedAt).toBeGreaterThan(0);
    expect(performance.now() - abortedAt).toBeLessThan(3_000);
    expect(children()).toEqual([]);
  }, 120_000);
});
