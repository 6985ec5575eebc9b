/**
 * `fleetsim calibrate` and `client.profile` end to end (docs/calibrate.md): the profile fitted on
 * a results file makes `predict` report what that client measured; a run names its profile; an
 * explicit overhead wins; mistakes are the user's (exit 2) and name the file.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { cli, setFlags } from "../helpers/cli.js";
import { tempDir } from "../helpers/specs.js";

const EXAMPLE = fileURLToPath(new URL("../../examples/aggregated.yaml", import.meta.url));

/** `predict` on the bundled example with `--set` overrides, into `out`. */
const predictExample = (out: string, ...sets: string[]) =>
  cli(
    "predict",
    "--stack",
    "engine",
    "-c",
    EXAMPLE,
    ...sets.flatMap((s) => ["--set", s]),
    "--output-dir",
    out,
  );

async function engineSide(dir: string): Promise<Record<string, number>> {
  const r = await predictExample(join(dir, "engine"));
  expect(r.code, r.err).toBe(0);
  return JSON.parse(readFileSync(join(dir, "engine", "prediction.json"), "utf8")).summary;
}

describe("fleetsim calibrate", () => {
  it("fits the client's overhead to a benchmark's TTFT, and predict with the profile reports it", async () => {
    const dir = tempDir("fleetsim-calibrate-");
    const engine = await engineSide(dir);
    // A vllm bench serve result whose client saw 12 ms more than the engine on every request.
    const results = join(dir, "result.json");
    writeFileSync(
      results,
      JSON.stringify({
        completed: 315,
        mean_ttft_ms: engine["mean_ttft_ms"]! + 12,
        mean_itl_ms: engine["mean_itl_ms"],
        mean_e2el_ms: engine["mean_e2e_latency_ms"]! + 12,
      }),
    );
    const profile = join(dir, "h200-vllm.yaml");
    const fit = await cli("calibrate", "-c", EXAMPLE, "--results", results, "-o", profile);
    expect(fit.code, fit.err).toBe(0);
    expect(fit.out).toContain("Client overhead: 12.00 ms per request");
    expect(fit.out).toContain(`Saved calibration profile 'h200-vllm' to: ${profile}`);
    const doc = parse(readFileSync(profile, "utf8"));
    expect(doc.calibration_profile).toBe(1);
    expect(doc.name).toBe("h200-vllm");
    expect(doc.client.overhead.request_ms).toBeCloseTo(12, 3);
    expect(doc.fitted_on[0]).toMatchObject({ file: "result.json", format: "vllm-bench-serve" });

    const run = await predictExample(join(dir, "calibrated"), `client.profile=${profile}`);
    expect(run.code, run.err).toBe(0);
    expect(run.out).toContain("Calibration Profile: h200-vllm (client overhead 12.00 ms per request)");
    const p = JSON.parse(readFileSync(join(dir, "calibrated", "prediction.json"), "utf8"));
    expect(p.run.client).toEqual({
      profile: "h200-vllm",
      request_ms: 12,
      response_ms: 0,
      timeout_seconds: null,
    });
    // A shift of every arrival (open loop): the same dynamics, up to the pass boundaries it moves
    // (and the CUDA-graph size those passes are padded to): within half a millisecond of +12.
    expect(p.summary.mean_ttft_ms).toBeCloseTo(engine["mean_ttft_ms"]! + 12, 0);

    // validate says what the client adds, and from which profile.
    const checked = await cli(
      "validate",
      "--stack",
      "engine",
      "-c",
      EXAMPLE,
      ...setFlags(`client.profile=${profile}`),
    );
    expect(checked.code, checked.err).toBe(0);
    expect(checked.out.replace(/\s+/g, " ")).toContain(
      "Client: +12 ms per request, calibration profile h200-vllm.",
    );

    // An overhead the config sets wins over the profile's (engine-side figures: 0).
    const explicit = await predictExample(
      join(dir, "explicit"),
      `client.profile=${profile}`,
      "client.overhead.request_ms=0",
    );
    expect(explicit.code, explicit.err).toBe(0);
    const e = JSON.parse(readFileSync(join(dir, "explicit", "prediction.json"), "utf8"));
    expect(e.summary.mean_ttft_ms).toBeCloseTo(engine["mean_ttft_ms"]!, 9);
  });

  it("refuses to overwrite a profile, and a results file it cannot read, with exit 2 naming the file", async () => {
    const dir = tempDir("fleetsim-calibrate-");
    const profile = join(dir, "p.yaml");
    writeFileSync(profile, "x\n");
    const results = join(dir, "r.json");
    writeFileSync(results, JSON.stringify({ mean_ttft_ms: 40 }));
    const exists = await cli("calibrate", "-c", EXAMPLE, "--results", results, "-o", profile);
    expect(exists.code).toBe(2);
    expect(exists.err).toContain(`${profile} exists: pass --overwrite to replace it`);
    const bad = join(dir, "bad.json");
    writeFileSync(bad, "{not json");
    const notJson = await cli("calibrate", "-c", EXAMPLE, "--results", bad, "-o", join(dir, "q.yaml"));
    expect(notJson.code).toBe(2);
    expect(notJson.err).toContain(`${bad}: not JSON`);
    const missing = await cli(
      "calibrate",
      "-c",
      EXAMPLE,
      "--results",
      join(dir, "none.json"),
      "-o",
      join(dir, "q.yaml"),
    );
    expect(missing.code).toBe(2);
    expect(missing.err).toContain("none.json: file not found");
    expect(notJson.err + missing.err).not.toMatch(/\n\s+at /); // no stack trace
  });

  it("a missing or malformed profile is a config error at client.profile, naming the profile file", async () => {
    const dir = tempDir("fleetsim-calibrate-");
    const missing = await predictExample(join(dir, "out"), `client.profile=${join(dir, "nope.yaml")}`);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain("client.profile");
    expect(missing.err).toContain(`calibration profile not found: ${join(dir, "nope.yaml")}`);
    const wrong = join(dir, "wrong.yaml");
    writeFileSync(
      wrong,
      "calibration_profile: 1\nname: x\nfitted_on: []\nclient: {overhead: {request_ms: -1}}\n",
    );
    const malformed = await predictExample(join(dir, "out2"), `client.profile=${wrong}`);
    expect(malformed.code).toBe(2);
    expect(malformed.err).toContain(`calibration profile ${wrong} at fitted_on`);
  });
});
