import { describe, expect, it } from "vitest";
import { STARTUP_PROBE_PREFIX, startupProbeLine } from "../../src/cli/startupProbe.js";

describe("FLEETSIM_STARTUP_PROBE", () => {
  it("is off unless the variable is set to something other than 0", () => {
    expect(startupProbeLine({})).toBeNull();
    expect(startupProbeLine({ FLEETSIM_STARTUP_PROBE: "" })).toBeNull();
    expect(startupProbeLine({ FLEETSIM_STARTUP_PROBE: "0" })).toBeNull();
  });

  it("prints this process's CPU, peak RSS and wall time since its start as one JSON line", () => {
    const line = startupProbeLine({ FLEETSIM_STARTUP_PROBE: "1" });
    expect(line).not.toBeNull();
    expect(line!.startsWith(STARTUP_PROBE_PREFIX)).toBe(true);
    expect(line!.endsWith("\n")).toBe(true);
    const probe = JSON.parse(line!.slice(STARTUP_PROBE_PREFIX.length));
    expect(Object.keys(probe).sort()).toEqual(["code_cache", "cpu_ms", "max_rss_bytes", "wall_ms"]);
    // Not started through the built CLI's launcher (cli/codeCache.ts).
    expect(probe.code_cache).toBe("none");
    expect(probe.cpu_ms).toBeGreaterThan(0);
    expect(probe.max_rss_bytes).toBeGreaterThan(0);
    expect(probe.wall_ms).toBeGreaterThan(0);
  });
});
