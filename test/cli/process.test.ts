import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { STARTUP_PROBE_ENV, STARTUP_PROBE_PREFIX } from "../../src/cli/startupProbe.js";
import { configFile, engineYaml, syntheticTraffic } from "../helpers/configYaml.js";
import { fleetsimProcess } from "../helpers/process.js";
import { tempDir } from "../helpers/specs.js";

/**
 * Runs the CLI as a child process. `interruptAfterMs`: SIGINT that long after the replay's event
 * loop started (the start-up probe line on stderr), so a slow start on a busy machine cannot make
 * the signal arrive before the handlers are installed.
 */
function run(args: string[], opts: { interruptAfterMs?: number } = {}) {
  if (opts.interruptAfterMs === undefined) return fleetsimProcess(args);
  return fleetsimProcess(
    args,
    { [STARTUP_PROBE_ENV]: "1" },
    { killAfterLine: { text: STARTUP_PROBE_PREFIX, ms: opts.interruptAfterMs, signal: "SIGINT" } },
  );
}

describe("fleetsim as a process", () => {
  it("exits 2 with a one-line error and no stack trace on a user mistake", async () => {
    const dir = tempDir();
    const r = await run(["predict", "-c", join(dir, "missing.yaml")]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("fleetsim: error:");
    expect(r.err).not.toContain("    at ");
  });

  it("FLEETSIM_STARTUP_PROBE=exit prints the probe line at the first event and ends there, writing nothing", async () => {
    const { dir, config } = configFile(
      `${syntheticTraffic("{type: concurrency, concurrency: 256}", "{requests: 2000000}", [2048, 1024])}${engineYaml(
        { replicas: 4, kvCache: "{capacity: {type: fixed, blocks: 100000}}", timing: "{type: polynomial}" },
      )}`,
      { name: "long.yaml" },
    );
    const out = join(dir, "out");
    // Two million requests: a run that went on past the probe would take minutes, not this test's time.
    const r = await fleetsimProcess(["predict", "-c", config, "--output-dir", out], {
      [STARTUP_PROBE_ENV]: "exit",
    });
    expect(r.code).toBe(0);
    const lines = r.err.split("\n").filter((l) => l.startsWith(STARTUP_PROBE_PREFIX));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0].slice(STARTUP_PROBE_PREFIX.length)).cpu_ms).toBeGreaterThan(0);
    expect(existsSync(out)).toBe(false);
  }, 60_000);

  it("Ctrl-C stops a long run with exit 130 and leaves no output behind", async () => {
    const { dir, config } = configFile(
      `${syntheticTraffic("{type: concurrency, concurrency: 256}", "{requests: 2000000}", [2048, 1024])}${engineYaml(
        {
          replicas: 4,
          kvCache: "{capacity: {type: fixed, blocks: 100000}}",
          timing: "{type: polynomial}",
        },
      )}`,
      { name: "long.yaml" },
    );
    const out = join(dir, "out");
    const r = await run(["predict", "-c", config, "--output-dir", out], { interruptAfterMs: 500 });
    expect(r.code).toBe(130);
    expect(r.err).toContain("interrupted");
    expect(existsSync(out)).toBe(false);
  }, 60_000);
});
