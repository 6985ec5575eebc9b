/**
 * The JavaScript heap guard (issue 13 §6): a run whose heap nears V8's limit stops cleanly as
 * `resource_limited` (exit 3, a message with the way out) instead of V8 aborting the process
 * (exit 134, no message), whatever the memory budget says.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HEAP_LIMIT_FRACTION, ResourceMonitor } from "../../src/resources/monitor.js";
import { configFile, engineYaml, fixedTiming } from "../helpers/configYaml.js";
import { fleetsimProcess } from "../helpers/process.js";
import { tempDir } from "../helpers/specs.js";

describe("heap guard", () => {
  it("the monitor stops at the heap fraction, before the memory budget, and reports the heap", () => {
    let used = 100;
    let exceeded = 0;
    const monitor = new ResourceMonitor({
      budgetBytes: 1e12,
      sample: () => 1e6,
      heapUsage: () => ({ usedBytes: used, limitBytes: 1000 }),
      onExceeded: () => exceeded++,
    });
    monitor.sampleNow();
    expect(monitor.exceeded).toBe(false);
    used = Math.ceil(HEAP_LIMIT_FRACTION * 1000) + 1;
    monitor.sampleNow();
    monitor.sampleNow();
    expect(exceeded).toBe(1);
    const report = monitor.stop();
    expect(report.exceededReason).toBe("heap_limit");
    expect(report.heapAtStop).toEqual({ usedBytes: used, limitBytes: 1000 });
  });

  it("a Planner ticking through a trace that spans centuries: exit 3 with the heap named, not a V8 abort", async () => {
    const dir = tempDir();
    // A row far in the future: the Planner ticks every second until it arrives. It comes first
    // in the file, so the preflight (which takes the span from the first and last rows) does not
    // see the span and refuse the run: the heap guard is what stops it.
    const rows = [
      { timestamp: 1e15, input_length: 40, output_length: 3, hash_ids: [1, 2, 4] },
      { timestamp: 0, input_length: 40, output_length: 3, hash_ids: [1, 2, 3] },
    ];
    const { config } = configFile(
      `traffic:
  source: {type: trace, format: mooncake, paths: [trace.jsonl], block_size: 16}
  load: {type: trace_timestamps}
${engineYaml({
  kvCache: "{block_size: 16, capacity: {type: fixed, blocks: 512}}",
  timing: fixedTiming(2, 1),
})}planner: {policy: enabled, target: load, enable_throughput_scaling: false, load_adjustment_interval_seconds: 1}
execution: {resources: {memory_limit_gb: 1000}}
`,
      { dir, name: "c.yaml", files: { "trace.jsonl": `${rows.map((r) => JSON.stringify(r)).join("\n")}\n` } },
    );
    const out = join(dir, "out");
    const r = await fleetsimProcess(
      ["predict", "--stack", "dynamo", "-c", config, "--output-dir", out],
      { FLEETSIM_CHECK_INVARIANTS: "0" },
      { nodeArgs: ["--max-old-space-size=700"] },
    );
    expect(r.err).toContain("run stopped as resource_limited: the JavaScript heap reached");
    expect(r.err).toContain("NODE_OPTIONS=--max-old-space-size=");
    expect(r.err).not.toContain("FATAL ERROR");
    expect(r.code).toBe(3);
    const runtime = JSON.parse(readFileSync(join(out, "resource-runtime.json"), "utf8"));
    expect(runtime.exceeded_reason ?? runtime.memory?.exceeded_reason).toBe("heap_limit");
  }, 120_000);
});
