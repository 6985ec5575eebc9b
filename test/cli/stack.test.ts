/**
 * `--stack` and `--online` as the reference's `aisimulate predict` takes them: the default stack
 * is `engine` (a fixed round-robin pool that rejects `router` and `planner`), and `--online` is
 * rejected because fleetsim replays offline only (seed 000: "`aisimulate predict --stack dynamo`
 * runs offline only, so `--online` is rejected"). Runs the CLI as given (`cliAsIs`): the `cli` test helper
 * names `--stack dynamo` itself.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliAsIs } from "../helpers/cli.js";
import { engineYaml, fixedTiming, syntheticTraffic } from "../helpers/configYaml.js";
import { tempDir } from "../helpers/specs.js";

const run = (...argv: string[]) => cliAsIs(argv);

const CONFIG = `${syntheticTraffic("{type: concurrency, concurrency: 2}", "{requests: 8}")}${engineYaml({
  model: "Qwen/Qwen3-8B",
  contextLength: 4096,
  kvCache: "{capacity: {type: fixed, blocks: 500}}",
  timing: fixedTiming(5, 1),
})}`;

function project(extra = ""): { config: string; out: string } {
  const dir = tempDir("fleetsim-stack-");
  const config = join(dir, "prediction.yaml");
  writeFileSync(config, CONFIG + extra);
  return { config, out: join(dir, "out") };
}

describe("--stack: the reference's default is engine", () => {
  it("predict without --stack runs the engine stack: a router section needs --stack dynamo", async () => {
    const p = project("router: {policy: kv_router}\n");
    const r = await run("predict", "-c", p.config, "--output-dir", p.out, "--progress", "none");
    expect(r.code).toBe(2);
    expect(r.err).toContain("section 'router' is not provided by stack 'engine'");
    expect(r.err).toContain("use --stack dynamo");
    const dynamo = await run(
      "predict",
      "--stack",
      "dynamo",
      "-c",
      p.config,
      "--output-dir",
      p.out,
      "--progress",
      "none",
    );
    expect(dynamo.code, dynamo.err).toBe(0);
  });

  it("validate without --stack rejects a planner section the same way", async () => {
    const p = project("planner: {policy: enabled}\n");
    const r = await run("validate", "-c", p.config);
    expect(r.code).toBe(2);
    expect(r.err).toContain("section 'planner' is not provided by stack 'engine'");
    expect((await run("validate", "--stack", "dynamo", "-c", p.config)).code).toBe(0);
  });

  it("a config without router and planner runs on the default stack (the README's quick start)", async () => {
    const r = await run("validate", "-c", "examples/aggregated.yaml");
    expect(r.code, r.err).toBe(0);
    const p = project();
    const predict = await run("predict", "-c", p.config, "--output-dir", p.out, "--progress", "none");
    expect(predict.code, predict.err).toBe(0);
  });
});

describe("--online: offline replay only", () => {
  it.each(["engine", "dynamo"])(
    "--stack %s --online is exit 2 before anything runs or is written",
    async (stack) => {
      const p = project();
      const r = await run("predict", "--stack", stack, "--online", "-c", p.config, "--output-dir", p.out);
      expect(r.code).toBe(2);
      expect(r.err).toBe(
        `fleetsim: error: --online is not supported: --stack ${stack} replays offline only, in virtual time ` +
          "(no wall-clock pacing); remove --online\n",
      );
      expect(r.out).toBe("");
      expect(existsSync(p.out)).toBe(false);
    },
  );
});
