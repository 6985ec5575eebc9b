/**
 * `fleetsim predict` end to end on one config of each synthetic traffic shape (docs/traffic.md):
 * each runs (with the suite's invariant checks, vitest.config.ts), reports the shape in
 * `prediction.run.traffic`, and two runs give byte-identical prediction.json (host-time keys
 * aside) and requests.jsonl.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HOST_TIME_KEYS } from "../../src/metrics/summary.js";
import { cli, cliPredict } from "../helpers/cli.js";
import { configFile, engineYaml } from "../helpers/configYaml.js";
import { tempDir } from "../helpers/specs.js";

const ENGINE = `${engineYaml({
  model: "Qwen/Qwen3-8B",
  contextLength: null,
  replicas: 2,
  kvCache: "{block_size: 16, capacity: {type: fixed, blocks: 8000}}",
  timing: "{type: polynomial}",
})}router: {policy: kv_router}
`;

const SHAPES: Record<string, { yaml: string; requests: number; run: Record<string, unknown> }> = {
  staged: {
    yaml: `traffic:
  source: {type: synthetic, input_tokens: 512, output_tokens: 32}
  load:
    type: constant_rate
    stages:
      - {requests_per_second: 4, duration_seconds: 5}
      - {requests_per_second: 20, requests: 40}
      - {requests_per_second: 2, duration_seconds: 5}
`,
    requests: 70,
    run: { source: "synthetic", load: "constant_rate", stages: 3, input_tokens: 512 },
  },
  "shared prefix": {
    yaml: `traffic:
  source:
    type: synthetic-shared-prefix
    groups: 4
    prompts_per_group: 10
    system_prompt_tokens: 1500
    question_tokens: {distribution: uniform, min: 50, max: 150}
    output_tokens: 32
  load: {type: poisson, requests_per_second: 8}
  stop: {requests: 40}
`,
    requests: 40,
    run: { source: "synthetic-shared-prefix", load: "poisson", input_tokens: 1600 },
  },
  sessions: {
    yaml: `traffic:
  source:
    type: synthetic-session
    new_input_tokens_per_turn: 200
    output_tokens_per_turn: 40
    session: {turns: 3, shared_prefix_ratio: 0.5, prefix_groups: 2, inter_turn_delay_ms: 300}
  load: {type: concurrency, concurrency: 4}
  stop: {sessions: 10}
`,
    requests: 30,
    run: { source: "synthetic-session", load: "concurrency", turns: 3, input_tokens: 200 },
  },
  "distributed lengths": {
    yaml: `traffic:
  source:
    type: synthetic
    seed: 5
    input_tokens: {distribution: lognormal, mean: 600, stddev: 300}
    output_tokens: {distribution: normal, mean: 64, stddev: 16, min: 8, max: 128}
  load: {type: poisson, requests_per_second: 10, seed: 3}
  stop: {requests: 50}
`,
    requests: 50,
    run: { source: "synthetic", load: "poisson", input_tokens: 600, output_tokens: 64 },
  },
};

const strip = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => !HOST_TIME_KEYS.some((k) => l.includes(`"${k}"`)))
    .join("\n");

describe("fleetsim predict on each synthetic traffic shape", () => {
  for (const [name, shape] of Object.entries(SHAPES)) {
    it(`${name}: runs, reports its shape, and is deterministic`, async () => {
      const dir = tempDir("fleetsim-traffic-");
      const { config } = configFile(`${shape.yaml}${ENGINE}`, { dir });
      const outs = ["a", "b"].map((d) => join(dir, d));
      for (const out of outs) {
        const r = await cliPredict(config, out, "--capture-per-request", "--progress", "none");
        expect(r.code, r.err).toBe(0);
      }
      const doc = JSON.parse(readFileSync(join(outs[0], "prediction.json"), "utf8"));
      expect(doc.summary.completed_requests).toBe(shape.requests);
      expect(doc.run.traffic).toMatchObject({ ...shape.run, requests: shape.requests });
      expect(strip(join(outs[0], "prediction.json"))).toBe(strip(join(outs[1], "prediction.json")));
      expect(readFileSync(join(outs[0], "requests.jsonl"), "utf8")).toBe(
        readFileSync(join(outs[1], "requests.jsonl"), "utf8"),
      );
    });
  }

  it("examples/synthetic-sessions.yaml validates", async () => {
    const r = await cli(
      "validate",
      "-c",
      join(import.meta.dirname, "../..", "examples", "synthetic-sessions.yaml"),
    );
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/synthetic sessions of 4\s+turns/);
  });

  it("a bad shape exits 2 naming the config path and its line", async () => {
    const dir = tempDir("fleetsim-traffic-");
    const { config } = configFile(
      `traffic:\n  source: {type: synthetic-session, session: {turns: 1}}\n  stop: {sessions: 2}\n${ENGINE}`,
      { dir },
    );
    const r = await cli("predict", "-c", config, "--output-dir", join(dir, "out"));
    expect(r.code).toBe(2);
    expect(r.err).toContain("traffic.source.session.turns");
    expect(r.err).toMatch(/line 2, column \d+/);
  });
});
