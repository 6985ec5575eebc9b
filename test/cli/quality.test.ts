import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { closestMatch, editDistance } from "../../src/config/suggest.js";
import { cli, setFlags } from "../helpers/cli.js";
import { loadError, RUNNABLE_ENGINE, tempDir } from "../helpers/configHelpers.js";

const VERSION = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

function configFile(text: string): string {
  const path = join(tempDir(), "prediction.yaml");
  writeFileSync(path, text);
  return path;
}

describe("editDistance / closestMatch", () => {
  it("counts insertions, deletions, substitutions and adjacent swaps as one edit", () => {
    expect(editDistance("routr", "router")).toBe(1);
    expect(editDistance("plnaner", "planner")).toBe(1);
    expect(editDistance("kv_ruoter", "kv_router")).toBe(1);
    expect(editDistance("itl_msec", "itl_ms")).toBe(2);
    expect(editDistance("", "abc")).toBe(3);
    expect(editDistance("same", "same")).toBe(0);
  });

  it("suggests only plausible typos, ignoring case and - vs _", () => {
    const keys = ["traffic", "engine", "router", "planner", "evaluation", "execution"];
    expect(closestMatch("routr", keys)).toBe("router");
    expect(closestMatch("Planner", keys)).toBe("planner");
    expect(closestMatch("foo", keys)).toBeUndefined();
    expect(closestMatch("xyz_settings", keys)).toBeUndefined();
    expect(closestMatch("block-size", ["block_size", "prefix_caching"])).toBe("block_size");
    // A short input never "matches" an unrelated short candidate.
    expect(closestMatch("a", ["b", "tp"])).toBeUndefined();
  });

  it("recognises a key written without its unit suffix when one candidate alone extends it", () => {
    expect(closestMatch("ttft", ["ttft_ms", "itl_ms", "e2e_ms"])).toBe("ttft_ms");
    expect(closestMatch("e2e", ["ttft_ms", "itl_ms", "e2e_ms"])).toBe("e2e_ms");
    // Two extensions: no guess. Too short: no guess.
    expect(closestMatch("max", ["max_tokens", "max_sequences"])).toBeUndefined();
    expect(closestMatch("tp", ["tp_size"])).toBeUndefined();
  });

  it("--set with a key missing its suffix gets the hint, as a typo in the file does", async () => {
    const config = configFile(`${RUNNABLE_ENGINE}evaluation:\n  sla: {itl_ms: 50}\n`);
    const r = await cli("validate", "-c", config, "--set", "evaluation.sla.ttft=100");
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      "evaluation.sla.ttft\n  Extra inputs are not permitted (from --set evaluation.sla.ttft=100); did you mean 'ttft_ms'?",
    );
  });
});

describe("did-you-mean in config errors", () => {
  it("a misspelled key: the hint follows its line and column", async () => {
    const config = configFile(`${RUNNABLE_ENGINE}routr:\n  policy: kv_router\n`);
    const r = await cli("predict", "-c", config, "--output-dir", join(tempDir(), "out"));
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      "routr\n  Extra inputs are not permitted (line 8, column 1); did you mean 'router'?",
    );
  });

  it("a misspelled enum value", async () => {
    const config = configFile(`${RUNNABLE_ENGINE}router:\n  policy: kv_routr\n`);
    const r = await cli("validate", "-c", config);
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      "router.policy\n  Input should be 'round_robin' or 'kv_router' (line 9, column 11); did you mean 'kv_router'?",
    );
  });

  it("nested keys and values of reference enums, in the issues themselves", () => {
    const err = loadError(
      RUNNABLE_ENGINE.replace("timing: {type: polynomial}", "timing: {type: polynomal}").replace(
        "kv_cache:",
        "schedular: {}\n      kv_cache:",
      ),
    );
    expect(err.issues.map((i) => [i.path, i.hint])).toEqual([
      ["engine.workers.aggregated.schedular", "did you mean 'scheduler'?"],
      ["engine.workers.aggregated.timing.type", "did you mean 'polynomial'?"],
    ]);
  });

  it("a misspelled --set path names the flag and suggests the key", () => {
    const err = loadError(RUNNABLE_ENGINE, { sets: ["router.polcy=kv_router"] });
    expect(err.format()).toContain(
      "router.polcy\n  Extra inputs are not permitted (from --set router.polcy=kv_router); did you mean 'policy'?",
    );
  });

  it("no hint when nothing is close", () => {
    const err = loadError(`${RUNNABLE_ENGINE}frobnicate: 1\n`);
    expect(err.issues[0].hint).toBeUndefined();
    expect(err.format()).not.toContain("did you mean");
  });
});

describe("commander suggestions for commands and options", () => {
  it("an unknown command", async () => {
    const r = await cli("predcit", "-c", "x.yaml");
    expect(r.code).toBe(2);
    expect(r.err).toContain("unknown command 'predcit'");
    expect(r.err).toContain("(Did you mean predict?)");
  });

  it("an unknown option", async () => {
    const r = await cli("predict", "-c", "x.yaml", "--ouput-dir", "out");
    expect(r.code).toBe(2);
    expect(r.err).toContain("unknown option '--ouput-dir'");
    expect(r.err).toContain("(Did you mean --output-dir?)");
  });
});

describe("--version and --help", () => {
  it.each([["-V"], ["--version"]])("%s prints the package version", async (flag) => {
    const r = await cli(flag);
    expect(r.code).toBe(0);
    expect(r.out).toBe(`${VERSION}\n`);
  });

  /** Command names listed by the top-level help, so that a new command is covered automatically. */
  async function commandNames(): Promise<string[]> {
    const r = await cli("--help");
    const section = r.out.split("Commands:\n")[1]?.split("\n\n")[0] ?? "";
    return section
      .split("\n")
      .map((line) => /^ {2}(\S+)/.exec(line)?.[1])
      .filter((name): name is string => name !== undefined && name !== "help");
  }

  it("the top-level help has examples and exit codes", async () => {
    const r = await cli("--help");
    expect(r.code).toBe(0);
    expect(r.out).toContain("Examples:\n  fleetsim ");
    expect(r.out).toContain("Exit codes:");
  });

  it("every registered command's help has an Examples: section", async () => {
    const names = await commandNames();
    expect(names).toEqual(expect.arrayContaining(["predict", "estimate", "convert", "validate", "schema"]));
    for (const name of names) {
      const r = await cli(name, "--help");
      expect(r.code, name).toBe(0);
      expect(r.out, `${name} --help`).toMatch(new RegExp(`Examples:\\n {2}fleetsim ${name} `));
    }
  });
});

describe("fleetsim validate", () => {
  it("prints FILE: ok and what would run", async () => {
    const r = await cli("validate", "-c", "examples/aggregated.yaml");
    expect(r.code).toBe(0);
    expect(r.err).toBe("");
    const [first, ...rest] = r.out.trimEnd().split("\n");
    expect(first).toBe("examples/aggregated.yaml: ok");
    const paragraph = rest.join(" ");
    expect(paragraph).toContain("an aggregated deployment of nvidia/Llama-3.1-8B-Instruct-FP8 on h200_sxm");
    expect(paragraph).toContain("2 aggregated workers (2 GPUs)");
    expect(paragraph).toContain("router round_robin, planner off");
    expect(paragraph).toContain("Mooncake trace");
    expect(rest.every((line) => line.length <= 100)).toBe(true);
  });

  it("applies --set overrides; --format json", async () => {
    const r = await cli(
      "validate",
      "-c",
      "examples/aggregated.yaml",
      ...setFlags("engine.workers.aggregated.parallelism.replicas=3", "router.policy=kv_router"),
      "--format",
      "json",
    );
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out);
    expect(doc).toMatchObject({
      config: "examples/aggregated.yaml",
      ok: true,
      run: { mode: "aggregated", workers: { aggregated: 3 }, gpus: 3, router: "kv_router", planner: false },
    });
  });

  it("reports errors exactly as predict does (exit 2)", async () => {
    const config = configFile(`${RUNNABLE_ENGINE}router:\n  policy: kv_routr\n`);
    const validate = await cli("validate", "-c", config);
    const predict = await cli("predict", "-c", config, "--output-dir", join(tempDir(), "out"));
    expect(validate.code).toBe(2);
    expect(validate.out).toBe("");
    expect(validate.err).toBe(predict.err);
  });

  it("a missing trace file is an error", async () => {
    const config = configFile(
      `traffic:\n  source: {type: trace, paths: [nope.jsonl]}\n  load: {type: trace_timestamps}\n${RUNNABLE_ENGINE}`,
    );
    const r = await cli("validate", "-c", config);
    expect(r.code).toBe(2);
    expect(r.err).toContain("trace file not found");
  });
});
