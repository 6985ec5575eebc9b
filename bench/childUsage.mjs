// Preloaded (`node --import`) into each process bench/replay.ts spawns: at exit, writes the
// process's own getrusage (user + system CPU, peak RSS) and its wall time since start as JSON to
// the file named by FLEETSIM_BENCH_USAGE. Plain JavaScript, so the child needs no TypeScript loader.
// It also sums the garbage collector's pauses on the main thread (perf_hooks `gc` entries), the
// share of the run issue 42 asks to keep under 2 %.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
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
        background_cpu_ms: backgroundCpuMs(),
      }),
    );
  });
}

/**
 * CPU (user + system) of every thread but the main one, in ms, from /proc (Linux; null
 * elsewhere): V8's platform workers, which run the optimizing compiler (TurboFan compiles hot
 * functions on them) and the garbage collector's concurrent and parallel phases. Their CPU is part
 * of the process's, and no CPU profile of the main thread shows it. Clock-tick resolution (10 ms
 * a thread).
 */
function backgroundCpuMs() {
  try {
    const ticksPerSecond = 100;
    let ticks = 0;
    for (const tid of readdirSync("/proc/self/task")) {
      if (Number(tid) === process.pid) continue;
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      // Fields after the command name (which may hold spaces): utime and stime are 14th and 15th.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    }
    return (ticks * 1000) / ticksPerSecond;
  } catch {
    return null;
  }
}
