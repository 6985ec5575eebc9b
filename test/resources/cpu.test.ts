import { spawn, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  formatCpuList,
  parseCpuList,
  pinCurrentProcess,
  readAllowedCpus,
} from "../../src/resources/cpuAffinity.js";
import { ResourceMonitor } from "../../src/resources/monitor.js";
import { RUNNABLE_ENGINE } from "../helpers/configHelpers.js";
import { dynamoTrace } from "../helpers/dynamoTraces.js";
import { fleetsimSync } from "../helpers/process.js";
import { retuneYaml } from "../helpers/retuneProject.js";
import { syntheticProject, tempDir } from "../helpers/specs.js";

describe("CPU lists", () => {
  it("parses and formats kernel CPU lists", () => {
    expect(parseCpuList("0-3,8,10-11\n")).toEqual([0, 1, 2, 3, 8, 10, 11]);
    expect(parseCpuList("5")).toEqual([5]);
    expect(formatCpuList([11, 0, 1, 2, 3, 8, 10, 2])).toBe("0-3,8,10-11");
    expect(formatCpuList([4])).toBe("4");
    expect(() => parseCpuList("0-a")).toThrow(/malformed/);
  });

  it("reads this process's allowed CPUs from /proc", () => {
    const cpus = readAllowedCpus("self");
    expect(cpus).not.toBeNull();
    expect(cpus!.length).toBeGreaterThan(0);
  });
});

describe("pinCurrentProcess", () => {
  it("asks taskset for the first cpu_limit allowed CPUs of every thread of the process", () => {
    const calls: (readonly string[])[] = [];
    const r = pinCurrentProcess(2, {
      readAllowed: () => [2, 3, 5, 7],
      run: (file, args) => calls.push([file, ...args]),
      pid: 4242,
    });
    expect(r).toEqual({ status: "pinned", cpus: "2-3", reason: null });
    expect(calls).toEqual([["taskset", "-a", "-p", "-c", "2-3", "4242"]]);
  });

  it("does nothing when the limit covers every CPU the process may use", () => {
    const r = pinCurrentProcess(4, {
      readAllowed: () => [0, 1, 2, 3],
      run: () => {
        throw new Error("must not run");
      },
    });
    expect(r).toEqual({ status: "not_needed", cpus: "0-3", reason: null });
  });

  it("reports why the limit is not enforced: no taskset, taskset failing, no /proc", () => {
    const enoent = Object.assign(new Error("spawn taskset ENOENT"), { code: "ENOENT" });
    expect(
      pinCurrentProcess(1, {
        readAllowed: () => [0, 1],
        run: () => {
          throw enoent;
        },
      }),
    ).toEqual({ status: "unavailable", cpus: null, reason: "taskset (util-linux) was not found" });
    const failed = Object.assign(new Error("exit 1"), {
      stderr: Buffer.from("taskset: failed to set pid 1's affinity\n"),
    });
    expect(
      pinCurrentProcess(1, {
        readAllowed: () => [0, 1],
        run: () => {
          throw failed;
        },
      }).reason,
    ).toBe("taskset failed: taskset: failed to set pid 1's affinity");
    expect(pinCurrentProcess(1, { readAllowed: () => null }).status).toBe("unavailable");
  });
});

describe("the resource monitor records the CPU affinity of the workers it sees", () => {
  it("a child started on CPU 0 only is reported as such", async () => {
    // The monitor owns (and reads) only descendants born after it started.
    const monitor = new ResourceMonitor({ budgetBytes: Number.MAX_SAFE_INTEGER, intervalMs: 50 });
    const child = spawn("taskset", ["-c", "0", "sleep", "5"], { stdio: "ignore" });
    try {
      // Let taskset set the affinity and exec sleep before the sample.
      await new Promise((resolve) => setTimeout(resolve, 300));
      monitor.sampleNow();
      expect(monitor.stop().descendantCpus).toEqual([0]);
    } finally {
      child.kill("SIGKILL");
    }
  });
});

describe("fleetsim executable: cpu_limit pins the execution process", () => {
  it("cpu_limit: 1 → resource-runtime.json reports the process pinned to the first allowed CPU", async () => {
    const allowed = readAllowedCpus("self") ?? [];
    // The CI machine and the development machine have 2 cores; pinning needs more than one.
    expect(allowed.length, "this test needs a host with at least 2 usable CPUs").toBeGreaterThanOrEqual(2);
    expect(spawnSync("taskset", ["--version"]).status, "taskset (util-linux) must be installed").toBe(0);
    const { config, out } = syntheticProject(20, "execution:\n  resources: {cpu_limit: 1}\n");
    const r = predictInSubprocess(config, out);
    expect(r.err).not.toContain("warning");
    expect(r.code).toBe(0);
    const rt = JSON.parse(readFileSync(join(out, "resource-runtime.json"), "utf8"));
    expect(rt.cpu_limit).toBe(1);
    expect(rt.cpu_pinning).toBe("pinned");
    expect(rt.cpu_affinity).toBe(String(allowed[0]));
    expect(rt.cpu_pinning_reason).toBeNull();
  }, 60_000);
});

describe("fleetsim executable: retune sweep workers inherit the pinning", () => {
  it("cpu_limit: 1 with max_parallel 2 → every sweep worker ran on the execution process's CPU", () => {
    const allowed = readAllowedCpus("self") ?? [];
    expect(allowed.length, "this test needs a host with at least 2 usable CPUs").toBeGreaterThanOrEqual(2);
    const dir = tempDir("fleetsim-cpu-retune-");
    writeFileSync(join(dir, "trace.jsonl"), dynamoTrace(70, 60));
    const config = join(dir, "retune.yaml");
    writeFileSync(
      config,
      retuneYaml(
        RUNNABLE_ENGINE,
        `interval_seconds: 30
        grace_seconds: 5
        max_parallel: 2
        router: {overlap_score_credit: {choices: [0.0, 1.0]}, prefill_load_scale: 1.0, temperature: 0.0}`,
        "execution:\n  resources: {cpu_limit: 1}\n",
      ),
    );
    const out = join(dir, "out");
    const r = predictInSubprocess(config, out);
    expect(r.code, r.err).toBe(0);
    const rt = JSON.parse(readFileSync(join(out, "resource-runtime.json"), "utf8"));
    expect(rt.cpu_pinning).toBe("pinned");
    expect(rt.cpu_affinity).toBe(String(allowed[0]));
    // The monitor read each sweep worker's affinity when it first saw it.
    expect(rt.worker_cpu_affinity).toBe(String(allowed[0]));
    const prediction = JSON.parse(readFileSync(join(out, "prediction.json"), "utf8"));
    expect(prediction.planner.retune_events.length).toBeGreaterThan(0);
  }, 120_000);
});

/** `fleetsim predict` as its own process (the executable, which may pin itself; tests never do). */
function predictInSubprocess(config: string, out: string) {
  return fleetsimSync(["predict", "--stack", "dynamo", "-c", config, "--output-dir", out]);
}
