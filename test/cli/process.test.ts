import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/specs.js";

const BIN = ["--import", "tsx", "src/cli/bin.ts"];

function run(args: string[], opts: { interruptAfterMs?: number } = {}) {
  return new Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string; err: string }>(
    (resolve, reject) => {
      const child = spawn(process.execPath, [...BIN, ...args], { stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      let err = "";
      child.stdout.on("data", (d) => {
        out += d;
      });
      child.stderr.on("data", (d) => {
        err += d;
      });
      if (opts.interruptAfterMs !== undefined) setTimeout(() => child.kill("SIGINT"), opts.interruptAfterMs);
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
    const r = await run(["predict", "-c", config, "--output-dir", out], { interruptAfterMs: 4000 });
    expect(r.code).toBe(130);
    expect(r.err).toContain("interrupted");
    expect(existsSync(out)).toBe(false);
  }, 60_000);
});
