/**
 * `fleetsim calibrate` shown on the calibration runs (docs/calibrate.md): for each model, its
 * single-stage `roleplay` run's published summary is written as inference-perf lifecycle metrics,
 * a profile is fitted on it (the same `calibrate()` the CLI runs), and the model's other runs are
 * predicted with `client.profile`: their TTFT and E2E means against what their client measured,
 * with and without the profile.
 *
 *   node --import tsx bench/fidelity/calibrateDemo.ts
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { predict } from "../../src/api/replay.js";
import { calibrate } from "../../src/calibrate/calibrate.js";
import { loadConfig } from "../../src/config/load.js";
import {
  type CalibrationRun,
  calibrationConfig,
  isOverload,
  loadCalibrationRuns,
  traceLines,
} from "./calibration.js";

const pct = (pred: number, real: number) => ((pred - real) / real) * 100;
const f = (x: number) => x.toFixed(1);

/** The run's published summary as inference-perf writes it (seconds). */
function lifecycleMetrics(run: CalibrationRun): unknown {
  const m = run.measured.summary;
  return {
    successes: {
      count: m.completed,
      latency: {
        time_to_first_token: { mean: m.ttftMeanMs / 1000 },
        request_latency: { mean: m.e2eMeanMs / 1000 },
      },
      output_len: { mean: m.clientOutputMean },
    },
    failures: { count: m.failures },
  };
}

/** The run's config and trace written to `dir`, with `client` extended by `client`. */
function writeRun(run: CalibrationRun, dir: string, client: Record<string, unknown> = {}): string {
  const trace = join(dir, `${run.id}.jsonl`);
  writeFileSync(trace, `${traceLines(run).join("\n")}\n`);
  const config = calibrationConfig(run, trace);
  config.client = { ...(config.client as Record<string, unknown>), ...client };
  const path = join(dir, `${run.id}.yaml`);
  writeFileSync(path, stringify(config));
  return path;
}

const runs = loadCalibrationRuns().filter((r) => !isOverload(r));
const dir = mkdtempSync(join(tmpdir(), "fleetsim-calibrate-demo-"));
try {
  let without = 0;
  let withProfile = 0;
  let n = 0;
  for (const model of [...new Set(runs.map((r) => r.model))].sort()) {
    const mine = runs.filter((r) => r.model === model);
    const base = mine.find((r) => r.workload.kind === "roleplay") ?? mine[0]!;
    const results = join(dir, `${base.id}.lifecycle.json`);
    writeFileSync(results, JSON.stringify(lifecycleMetrics(base)));
    // The base run's own config, its client overhead left to the fit.
    const spec = loadConfig({
      configPath: writeRun(base, dir, { overhead: { request_ms: 0 } }),
      sets: [],
      stack: "engine",
    });
    const { profile } = await calibrate(spec, [results], `${model.split("/")[1]}-roleplay`);
    const profilePath = join(dir, `${profile.name}.yaml`);
    writeFileSync(profilePath, stringify(profile));
    console.log(
      `\n${model}: profile '${profile.name}' fitted on ${base.id} (client overhead ${f(profile.client.overhead.request_ms)} ms)`,
    );
    for (const run of mine.filter((r) => r !== base)) {
      const plain = await predict(parse(readFileSync(writeRun(run, dir), "utf8")), { baseDir: dir });
      // The profile's overhead: the config sets none of its own.
      const configPath = writeRun(run, dir, { profile: profilePath, overhead: {} });
      const calibrated = await predict(parse(readFileSync(configPath, "utf8")), { baseDir: dir });
      const m = run.measured.summary;
      const t0 = plain.summary.mean_ttft_ms;
      const t1 = calibrated.summary.mean_ttft_ms;
      const e1 = calibrated.summary.mean_e2e_latency_ms;
      without += Math.abs(pct(t0, m.ttftMeanMs));
      withProfile += Math.abs(pct(t1, m.ttftMeanMs));
      n++;
      console.log(
        `  ${run.id.padEnd(46)} TTFT measured ${f(m.ttftMeanMs)} ms: engine-side ${f(t0)} (${f(pct(t0, m.ttftMeanMs))} %), ` +
          `with the profile ${f(t1)} (${f(pct(t1, m.ttftMeanMs))} %); E2E ${f(pct(e1, m.e2eMeanMs))} %`,
      );
    }
  }
  console.log(
    `\nTTFT mean APE over the ${n} runs not fitted on: engine-side ${f(without / n)} %, with each model's profile ${f(withProfile / n)} %`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
