/**
 * The decode step each calibration run measured in its steady state, beside the step fleetsim
 * prices for the same batch and context (docs/fidelity.md "Calibration runs", item 3). A
 * development tool: it reads the per-request TTFT and E2E that `inference-sim/training` published
 * at c4f03409 (`replay_data/<run>.json` and `<run>_ground_truth.json`, removed from the repository
 * later), which the derived calibration data does not carry:
 *
 *   git -C <clone of inference-sim/training> worktree add /tmp/training c4f03409
 *   node --import tsx scripts/calibration-steady-steps.ts /tmp/training
 *
 * Per stage (its first minute left out, and the stretch after a run's first failure, where its
 * requests no longer succeed): the mean number of requests between their first and last token
 * (the running batch), their mean context (prompt plus the tokens generated so far, generation
 * assumed even between first and last token), and the mean of each request's
 * (E2E − TTFT) / (output − 1), the step as its client saw it. That step also holds the prefill
 * work of the requests admitted meanwhile, which is small here (the prompts are cache hits).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { arrivalsMs, loadCalibrationRuns } from "../bench/fidelity/calibration.js";
import { estimateCommand } from "../src/cli/estimate.js";

const dir = process.argv[2];
if (dir === undefined) {
  console.error(
    "usage: node --import tsx scripts/calibration-steady-steps.ts <inference-sim/training at c4f03409>",
  );
  process.exit(2);
}

interface GroundTruth {
  readonly has_error: boolean;
  readonly ttft_s: number | null;
  readonly e2e_s: number | null;
}

async function pricedStepMs(model: string, gpu: string, tensor: number, batch: number, context: number) {
  let text = "";
  await estimateCommand(
    {
      model,
      hardware: gpu,
      backend: "vllm",
      tensor,
      pipeline: 1,
      moeTensor: 1,
      moeExpert: 1,
      prefix: 0,
      batch,
      context,
      format: "json",
    },
    { out: (t) => (text += t), err: () => {} },
  );
  return (JSON.parse(text) as { total_ms: number }).total_ms;
}

console.log("run  stage  batch  context  step real / priced (ms)");
for (const run of loadCalibrationRuns()) {
  const truth = JSON.parse(
    readFileSync(join(dir, "replay_data", `${run.id}_ground_truth.json`), "utf8"),
  ) as GroundTruth[];
  const at = arrivalsMs(run);
  const out = run.workload.outputLen;
  const ok = truth.flatMap((t, i) =>
    t.has_error || t.ttft_s === null || t.e2e_s === null
      ? []
      : [
          {
            first: at[i] / 1000 + t.ttft_s,
            last: at[i] / 1000 + t.e2e_s,
            prompt: run.promptLengths[i % run.promptLengths.length],
          },
        ],
  );
  const collapse =
    run.outcome.firstFailure === null ? Number.POSITIVE_INFINITY : at[run.outcome.firstFailure] / 1000;
  let stageStart = 0;
  for (const [k, stage] of run.workload.stages.entries()) {
    const from = stageStart + 60;
    const to = Math.min(stageStart + stage.durationS, collapse);
    stageStart += stage.durationS;
    let seconds = 0;
    let batchSum = 0;
    let contextSum = 0;
    for (let t = from; t < to; t += 1) {
      let running = 0;
      let context = 0;
      for (const r of ok)
        if (t >= r.first && t < r.last) {
          running++;
          context += r.prompt + (out * (t - r.first)) / (r.last - r.first);
        }
      if (running === 0) continue;
      seconds++;
      batchSum += running;
      contextSum += context / running;
    }
    const steps = ok.filter((r) => r.first >= from && r.last < to).map((r) => (r.last - r.first) / (out - 1));
    if (seconds === 0 || steps.length === 0) continue;
    const batch = batchSum / seconds;
    const context = contextSum / seconds;
    const real = (steps.reduce((a, b) => a + b, 0) / steps.length) * 1000;
    const priced = await pricedStepMs(run.model, run.gpu, run.tensor, Math.round(batch), Math.round(context));
    const pct = ((priced - real) / real) * 100;
    console.log(
      `${run.id}  ${k}  ${batch.toFixed(1)}  ${context.toFixed(0)}  ${real.toFixed(2)} / ${priced.toFixed(2)} (${pct >= 0 ? "+" : ""}${pct.toFixed(1)} %)`,
    );
  }
}
