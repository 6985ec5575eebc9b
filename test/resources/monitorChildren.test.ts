import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { descendantPids, hasChildProcesses, ResourceMonitor } from "../../src/resources/monitor.js";

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

  it("descendantPids walks the children files down to grandchildren", async () => {
    // A shell that starts a sleep in the background and waits: child and grandchild.
    const child = spawn("sh", ["-c", "sleep 5 & wait"], { stdio: "ignore" });
    let found: number[] = [];
    try {
      await once(child, "spawn");
      for (let i = 0; i < 50 && found.length < 2; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        found = descendantPids() ?? [];
      }
      expect(found).toHaveLength(2);
      expect(found).toContain(child.pid);
      expect(descendantPids(child.pid)).toEqual(found.filter((p) => p !== child.pid));
    } finally {
      for (const pid of found) if (pid !== child.pid) process.kill(pid, "SIGKILL");
      child.kill("SIGKILL");
    }
    await once(child, "exit");
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
