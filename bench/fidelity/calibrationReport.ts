/**
 * Replays the 16 calibration runs (bench/fidelity/calibration.ts) and prints, per run and per
 * stage, what the client measured beside what fleetsim predicts, then the mean absolute
 * percentage errors, cross-validated leave one model out:
 *
 *   node --import tsx bench/fidelity/calibrationReport.ts [--only REGEX] [--json FILE] [--worker YAML]
 *
 * The one fitted parameter is the client's fixed overhead (`client.overhead.request_ms`: HTTP,
 * tokenisation, detokenisation and the streamed chunk, which the engine's clock does not see). It
 * shifts a request's TTFT and E2E alike in these open-loop replays, so each run is replayed once
 * without it and the overhead is added after: for each model it is fitted on the other three
 * models' stages (the weighted median of the TTFT residuals, which minimises their absolute
 * percentage error) and applied to the fourth. Overloaded runs (`reasoning`) are scored on
 * saturation and failures, not latency.
 *
 * `--worker` replaces blocks of every run's worker (e.g. `{timing: {type: default, host_overhead:
 * {per_sequence_ms: 0}}}`), to measure a change before it is made the default.
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { parse } from "yaml";
import { fitClientOverheadMs } from "../../src/calibrate/fit.js";
import {
  arrivalsMs,
  type CalibrationRun,
  isOverload,
  loadCalibrationRuns,
  type PredictedRun,
  simulateCalibrationRun,
} from "./calibration.js";

const { values } = parseArgs({
  options: { only: { type: "string" }, json: { type: "string" }, worker: { type: "string" } },
});
const worker = values.worker === undefined ? null : (parse(values.worker) as Record<string, unknown>);
const only = values.only === undefined ? null : new RegExp(values.only);
const runs = loadCalibrationRuns().filter((r) => only === null || only.test(r.id));

const pct = (pred: number, real: number) => ((pred - real) / real) * 100;
const f = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : "—");
const sign = (x: number) => `${x >= 0 ? "+" : ""}${f(x)} %`;

const results: Array<{ run: CalibrationRun; predicted: PredictedRun }> = [];
for (const run of runs)
  results.push({
    run,
    predicted: await simulateCalibrationRun(run, worker === null ? {} : { workerOverrides: worker }),
  });

const latencyStages = (model: string | null, exclude: boolean) =>
  results
    .filter(({ run }) => !isOverload(run) && (model === null || (run.model === model) !== exclude))
    .flatMap(({ run, predicted }) =>
      run.measured.stages.map((m, k) => ({ engine: predicted.stages[k].ttftMeanMs, measured: m.ttftMeanMs })),
    );
const models = [...new Set(results.map((r) => r.run.model))].sort();
const offsetFor = new Map<string, number>();
for (const m of models) offsetFor.set(m, fitClientOverheadMs(latencyStages(m, true)));
const fullOffset = fitClientOverheadMs(latencyStages(null, false));

interface Row {
  run: string;
  model: string;
  stage: number | "run";
  overload: boolean;
  ttft: [number, number];
  e2e: [number, number];
  itl: [number, number];
  failures: [number, number];
}
const rows: Row[] = [];

for (const { run, predicted } of results) {
  const c = offsetFor.get(run.model) ?? 0;
  console.log(
    `\n${run.id}  (${run.model}, TP${run.tensor}, ${run.workload.kind}; client overhead ${f(c)} ms from the other models; ` +
      `replay ${f(predicted.hostMs / 1000)} s${predicted.saturated ? ", saturated" : ""})`,
  );
  console.log(
    "stage  rate  | TTFT mean real / sim         | E2E mean real / sim          | ITL real / sim            | fail real / sim",
  );
  let completed = 0;
  let ttftSum = 0;
  let e2eSum = 0;
  run.workload.stages.forEach((s, k) => {
    const m = run.measured.stages[k];
    const p = predicted.stages[k];
    const ttft = p.ttftMeanMs + c;
    const e2e = p.e2eMeanMs + c;
    completed += p.completed;
    ttftSum += ttft * p.completed;
    e2eSum += e2e * p.completed;
    console.log(
      `${String(k).padStart(5)}  ${String(s.rate).padStart(4)}  | ${f(m.ttftMeanMs).padStart(8)} / ${f(ttft).padStart(8)} ${sign(pct(ttft, m.ttftMeanMs)).padStart(9)} ` +
        `| ${f(m.e2eMeanMs).padStart(8)} / ${f(e2e).padStart(8)} ${sign(pct(e2e, m.e2eMeanMs)).padStart(9)} ` +
        `| ${f(m.itlMeanMs, 2).padStart(6)} / ${f(p.itlMeanMs, 2).padStart(6)} ${sign(pct(p.itlMeanMs, m.itlMeanMs)).padStart(9)} ` +
        `| ${String(m.failures).padStart(5)} / ${String(p.failures).padStart(5)}`,
    );
    rows.push({
      run: run.id,
      model: run.model,
      stage: k,
      overload: isOverload(run),
      ttft: [m.ttftMeanMs, ttft],
      e2e: [m.e2eMeanMs, e2e],
      itl: [m.itlMeanMs, p.itlMeanMs],
      failures: [m.failures, p.failures],
    });
  });
  const m = run.measured.summary;
  const ttft = ttftSum / completed;
  const e2e = e2eSum / completed;
  const itl = (e2e - ttft) / (m.clientOutputMean - 1);
  rows.push({
    run: run.id,
    model: run.model,
    stage: "run",
    overload: isOverload(run),
    ttft: [m.ttftMeanMs, ttft],
    e2e: [m.e2eMeanMs, e2e],
    itl: [m.itlMeanMs, itl],
    failures: [m.failures, predicted.stages.reduce((a, x) => a + x.failures, 0)],
  });
}

const mape = (xs: Row[], metric: "ttft" | "e2e" | "itl") =>
  xs.reduce((a, r) => a + Math.abs(pct(r[metric][1], r[metric][0])), 0) / xs.length;
const line = (label: string, xs: Row[]) =>
  console.log(
    `${label.padEnd(34)} ${String(xs.length).padStart(3)}  TTFT ${f(mape(xs, "ttft")).padStart(6)} %  ` +
      `E2E ${f(mape(xs, "e2e")).padStart(6)} %  ITL ${f(mape(xs, "itl")).padStart(6)} %`,
  );
console.log("\nCross-validated (leave one model out), runs that are not overloaded; mean APE of the means");
line(
  "per stage",
  rows.filter((r) => !r.overload && r.stage !== "run"),
);
line(
  "per run",
  rows.filter((r) => !r.overload && r.stage === "run"),
);
for (const m of models)
  line(
    `  held-out ${m}`,
    rows.filter((r) => !r.overload && r.stage !== "run" && r.model === m),
  );
// Load regimes: a two-stage run's second stage is the one near its knee (the issue's "last stage").
const stageCount = new Map(results.map(({ run }) => [run.id, run.workload.stages.length]));
const nearKnee = (r: Row) =>
  r.stage !== "run" && (stageCount.get(r.run) ?? 1) > 1 && r.stage === (stageCount.get(r.run) ?? 1) - 1;
line(
  "  moderate load (first or only stage)",
  rows.filter((r) => !r.overload && r.stage !== "run" && !nearKnee(r)),
);
line(
  "  near the knee (second stage)",
  rows.filter((r) => !r.overload && nearKnee(r)),
);
console.log(
  `client overhead fitted per fold: ${models.map((m) => `${m.split("/")[1]} ${f(offsetFor.get(m) ?? 0)} ms`).join(", ")}; on every model replayed: ${f(fullOffset)} ms`,
);
console.log(
  "\nOverloaded runs: saturation and failures (client timeout 300 s); the collapse: first failed request's arrival, successes after it (real / sim)",
);
for (const { run, predicted } of results.filter((r) => isOverload(r.run))) {
  const m = run.measured.summary;
  const failed = predicted.stages.reduce((a, x) => a + x.failures, 0);
  const at = arrivalsMs(run);
  const firstS = (o: CalibrationRun["outcome"]) =>
    o.firstFailure === null ? "none" : `${f(at[o.firstFailure] / 1000)} s`;
  console.log(
    `  ${run.id.padEnd(48)} saturated ${predicted.saturated ? "yes" : "no "}  failures ${m.failures} / ${failed} (${sign(pct(failed, m.failures))})  first ${firstS(run.outcome)} / ${firstS(predicted.outcome)}  after ${run.outcome.succeededAfterFirstFailure} / ${predicted.outcome.succeededAfterFirstFailure}`,
  );
}
if (values.json !== undefined)
  writeFileSync(
    values.json,
    `${JSON.stringify({ rows, offsets: Object.fromEntries(offsetFor), fullOffset }, null, 2)}\n`,
  );
