import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { STARTUP_PROBE_ENV, STARTUP_PROBE_PREFIX } from "../../src/cli/startupProbe.js";
import { tempDir } from "../helpers/specs.js";

const BIN = ["--import", "tsx", "src/cli/bin.ts"];

/**
 * Runs the CLI as a child process. `interruptAfterMs`: SIGINT that long after the replay's event
 * loop started (the start-up probe line on stderr), so a slow start on a busy machine cannot make
 * the signal arrive before the handlers are installed.
 */
function run(args: string[], opts: { interruptAfterMs?: number } = {}) {
  return new Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string; err: string }>(
    (resolve, reject) => {
      const env =
        opts.interruptAfterMs === undefined ? process.env : { ...process.env, [STARTUP_PROBE_ENV]: "1" };
      const child = spawn(process.execPath, [...BIN, ...args], { stdio: ["ignore", "pipe", "pipe"], env });
      let out = "";
      let err = "";
      let armed = false;
      child.stdout.on("data", (d) => {
        out += d;
      });
      child.stderr.on("data", (d) => {
        err += d;
        if (opts.interruptAfterMs !== undefined && !armed && err.includes(STARTUP_PROBE_PREFIX)) {
          armed = true;
          setTimeout(() => child.kill("SIGINT"), opts.interruptAfterMs);
        }
      });
      child.on("error", reject);
      child.on("close", (code, signal) => resolve({ code, signal, out, err }));
    },
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

  it("Ctrl-C stops a long run with exit 130 and leaves no output behind", async () => {
    const dir = tempDir();
    const config = join(dir, "long.yaml");
    writeFileSync(
      config,
      `traffic:
  source: {type: synthetic, input_tokens: 2048, output_tokens: 1024}
  load: {type: concurrency, concurrency: 256}
  stop: {requests: 2000000}
engine:
  model: test/model
  hardware: h200_sxm
  context_length: 8192
  workers:
    aggregated:
      parallelism: {replicas: 4}
      kv_cache: {capacity: {type: fixed, blocks: 100000}}
      timing: {type: polynomial}
`,
    );
    const out = join(dir, "out");
    const r = await run(["predict", "-c", config, "--output-dir", out], { interruptAfterMs: 500 });
    expect(r.code).toBe(130);
    expect(r.err).toContain("interrupted");
    expect(existsSync(out)).toBe(false);
  }, 60_000);
});
