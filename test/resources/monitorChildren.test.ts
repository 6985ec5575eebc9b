import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { hasChildProcesses, ResourceMonitor } from "../../src/resources/monitor.js";

describe("the resource monitor scans /proc only when this process has a child", () => {
  it("hasChildProcesses sees a child from /proc/self/task/*/children while it runs", async () => {
    const before = hasChildProcesses();
    expect(before, "this test needs Linux /proc/self/task/<tid>/children").not.toBeNull();
    const child = spawn("sleep", ["5"], { stdio: "ignore" });
    try {
      await once(child, "spawn");
      expect(hasChildProcesses()).toBe(true);
    } finally {
      child.kill("SIGKILL");
    }
    await once(child, "exit");
    expect(hasChildProcesses()).toBe(before);
  });

  it("with or without a child, a sample counts this process and the children born after the start", async () => {
    const monitor = new ResourceMonitor({ budgetBytes: Number.MAX_SAFE_INTEGER });
    const self = monitor.sampleNow();
    expect(self).toBeGreaterThan(0);
    const child = spawn("sleep", ["5"], { stdio: "ignore" });
    try {
      await once(child, "spawn");
      // Let the child exec sleep, so it has a resident set of its own.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(monitor.sampleNow()).toBeGreaterThan(process.memoryUsage.rss());
      // The child is owned: a stop above the budget would kill it.
      monitor.killOwned();
      await once(child, "exit");
    } finally {
      child.kill("SIGKILL");
    }
    const report = monitor.stop();
    expect(report.samples).toBe(2);
    expect(report.killedPids).toEqual([child.pid]);
  });
});
