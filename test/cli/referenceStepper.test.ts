/**
 * `FLEETSIM_REFERENCE_STEPPER=1` (docs/cli.md): predict steps every pass through the event queue
 * and writes the same prediction.json and requests.jsonl as the default decode-run merging.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { runPrediction } from "../../src/pipeline/index.js";
import { stripHostTime } from "../golden/cases.js";
import { cliPredict, setFlags } from "../helpers/cli.js";
import { tempDir } from "../helpers/specs.js";

const EXAMPLE = join(import.meta.dirname, "..", "..", "examples", "aggregated.yaml");

async function predict(reference: boolean): Promise<{ prediction: string; requests: string }> {
  if (reference) process.env.FLEETSIM_REFERENCE_STEPPER = "1";
  else delete process.env.FLEETSIM_REFERENCE_STEPPER;
  const out = tempDir();
  const run = await cliPredict(
    EXAMPLE,
    out,
    "--overwrite",
    "--capture-per-request",
    ...setFlags("engine.workers.aggregated.parallelism.replicas=3"),
  );
  expect(run.code).toBe(0);
  const doc = JSON.parse(readFileSync(join(out, "prediction.json"), "utf8"));
  return {
    prediction: JSON.stringify(stripHostTime(doc)),
    requests: readFileSync(join(out, "requests.jsonl"), "utf8"),
  };
}

describe("FLEETSIM_REFERENCE_STEPPER", () => {
  afterEach(() => {
    delete process.env.FLEETSIM_REFERENCE_STEPPER;
  });

  it("switches the replay to pass-by-pass stepping", async () => {
    const spec = loadConfig({ configPath: EXAMPLE, sets: [], stack: "dynamo" });
    const merged = await runPrediction(spec, { capturePerRequest: false });
    process.env.FLEETSIM_REFERENCE_STEPPER = "1";
    const reference = await runPrediction(spec, { capturePerRequest: false });
    expect(merged.result.passesInRuns).toBeGreaterThan(0.3 * merged.result.passes);
    expect(reference.result.passesInRuns).toBe(0);
    expect(reference.result.passes).toBe(merged.result.passes);
  });

  it("gives the bundled example's outputs byte for byte, pass by pass", async () => {
    const merged = await predict(false);
    const reference = await predict(true);
    expect(reference.prediction).toBe(merged.prediction);
    expect(reference.requests).toBe(merged.requests);
    expect(merged.requests.length).toBeGreaterThan(1000);
  });
});
