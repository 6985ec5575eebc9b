/**
 * A config without `traffic` runs the reference's default workload, and `predict` and `validate`
 * say so (docs/traffic.md "No traffic section"); a config with one gets no note.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../helpers/cli.js";
import { tempDir } from "../helpers/specs.js";

const ENGINE = `engine:
  model: Qwen/Qwen3-8B
  hardware: h200_sxm
  workers:
    aggregated:
      parallelism: {replicas: 1}
      timing: {type: polynomial}
`;

function config(text: string): string {
  const path = join(tempDir("fleetsim-traffic-"), "c.yaml");
  writeFileSync(path, text);
  return path;
}

describe("a config without traffic", () => {
  it("validate and predict run the default workload and say so on stderr", async () => {
    const path = config(ENGINE);
    const note = `fleetsim: note: ${path} has no traffic section: the default workload runs, as in aisimulate (100 synthetic requests of 1024 input and 128 output tokens at concurrency 10)\n`;
    const validated = await cli("validate", "-c", path, "--stack", "engine");
    expect(validated.code).toBe(0);
    expect(validated.err).toBe(note);
    expect(validated.out.replace(/\s+/g, " ")).toContain(
      "synthetic requests of 1024 input / 128 output tokens, closed loop at concurrency 10, 100 requests",
    );
    const out = join(tempDir("fleetsim-traffic-"), "out");
    const predicted = await cli(
      "predict",
      "-c",
      path,
      "--stack",
      "engine",
      "--output-dir",
      out,
      "--format",
      "json",
    );
    expect(predicted.code).toBe(0);
    expect(predicted.err.startsWith(note)).toBe(true);
    expect(JSON.parse(predicted.out).num_requests).toBe(100);
  });

  it("a config with traffic gets no note", async () => {
    const path = config(`traffic:
  source: {type: synthetic, input_tokens: 64, output_tokens: 4}
  load: {type: concurrency, concurrency: 2}
  stop: {requests: 5}
${ENGINE}`);
    const validated = await cli("validate", "-c", path, "--stack", "engine");
    expect(validated.code).toBe(0);
    expect(validated.err).toBe("");
  });
});
