// Preloaded (`node --import`) into each process bench/replay.ts spawns: at exit, writes the
// process's own getrusage (user + system CPU, peak RSS) and its wall time since start as JSON to
// the file named by FLEETSIM_BENCH_USAGE. Plain JavaScript, so the child needs no TypeScript loader.
// It also sums the garbage collector's pauses on the main thread (perf_hooks `gc` entries), the
// share of the run issue 42 asks to keep under 2 %.
import { writeFileSync } from "node:fs";
import { PerformanceObserver } from "node:perf_hooks";

const target = process.env.FLEETSIM_BENCH_USAGE;
if (target) {
  let gcMs = 0;
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcMs += e.duration;
  });
  gc.observe({ entryTypes: ["gc"] });
  process.on("exit", () => {
    // Entries not yet delivered to the callback.
    for (const e of gc.takeRecords()) gcMs += e.duration;
    const u = process.resourceUsage();
    writeFileSync(
      target,
      JSON.stringify({
        cpu_ms: (u.userCPUTime + u.systemCPUTime) / 1000,
        max_rss_bytes: u.maxRSS * 1024,
        wall_ms: performance.now(),
        gc_ms: gcMs,
      }),
    );
  });
}
