// Preloaded (`node --import`) into each process bench/replay.ts spawns: at exit, writes the
// process's own getrusage (user + system CPU, peak RSS) and its wall time since start as JSON to
// the file named by FLEETSIM_BENCH_USAGE. Plain JavaScript, so the child needs no TypeScript loader.
import { writeFileSync } from "node:fs";

const target = process.env.FLEETSIM_BENCH_USAGE;
if (target) {
  process.on("exit", () => {
    const u = process.resourceUsage();
    writeFileSync(
      target,
      JSON.stringify({
        cpu_ms: (u.userCPUTime + u.systemCPUTime) / 1000,
        max_rss_bytes: u.maxRSS * 1024,
        wall_ms: performance.now(),
      }),
    );
  });
}
