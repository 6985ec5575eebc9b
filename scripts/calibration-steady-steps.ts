/**
 * The decode step each calibration run measured in its steady state, beside the step fleetsim
 * prices for the same batch and context (docs/fidelity.md "Calibration runs", item 3). A
 * development tool: it reads the per-request TTFT and E2E that `inference-sim/training` published
 * at c4f03409 (`replay_data/<run>.json` and `<run>_ground_truth.json`, removed from the repository
 * later), which the derived calibration data does not carry:
 *
 *   git -C <clone of inference-sim/training> worktree add /tmp/training c4f03409
 *   node --import tsx scripts/calibration-steady-steps.ts /tmp/training [--window 60] [--only reasoning]
 *
 * Per stage (its first minute left out, and the stretch after a run's first failure, where its
 * requests no longer succeed): the mean number of requests between their first and last token
 * (the running batch), their mean context (prompt plus the tokens generated so far, generation
 * assumed even between first and last token), and the mean of each request's
 * (E2E − TTFT) / (output − 1), the step as its client saw it. That step also holds the prefill
 * work of the requests admitted meanwhile, which is small here (the prompts are cache hits).
 *
 * `--window S` splits each stage into S-second windows (a request counts in the window where its
 * first token came) and adds the mean number of requests waiting for their first token: that is
 * how the overloaded runs were seen to slow down over minutes at a constant batch and context
 * (docs/fidelity.md "Calibration runs", item 3). `--only TEXT` keeps the runs whose id holds TEXT.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { arrivalsMs, loadCalibrationRuns } from "../bench/fidelity/calibration.js";
import { estimateCommand } from "../src/cli/estimate.js";

const usage =
  "usage: node --import tsx scripts/calibration-steady-steps.ts <inference-sim/training at c4f03409> [--window S] [--only TEXT]";
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { window: { type: "string" }, only: { type: "string" } },
});
const dir = positionals[0];
const windowS = values.window === undefined ? Number.POSITIVE_INFINITY : Number(values.window);
if (dir === undefined || !(windowS > 0)) {
  console.error(usage);
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

console.log(
  `run  stage${Number.isFinite(windowS) ? "  from s" : ""}  batch  context${Number.isFinite(windowS) ? "  waiting" : ""}  step real / priced (ms)`,
);
for (const run of loadCalibrationRuns()) {
  if (values.only !== undefined && !run.id.includes(values.only)) continue;
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
  // A request the client gave up on waited for its first token until it failed (or the end).
  const firstTokenS = truth.map((t, i) => at[i] / 1000 + (t.ttft_s ?? Number.POSITIVE_INFINITY));
  const collapse =
    run.outcome.firstFailure === null ? Number.POSITIVE_INFINITY : at[run.outcome.firstFailure] / 1000;
  let stageStart = 0;
  for (const [k, stage] of run.workload.stages.entries()) {
    const stageFrom = stageStart + 60;
    const stageTo = Math.min(stageStart + stage.durationS, collapse);
    stageStart += stage.durationS;
    for (let from = stageFrom; from < stageTo; from += windowS) {
      const to = Math.min(from + windowS, stageTo);
      const line = await stepLine(run, ok, out, from, to, (t) => waitingAt(at, firstTokenS, t));
      if (line !== null)
        console.log(`${run.id}  ${k}  ${Number.isFinite(windowS) ? `${from.toFixed(0)}  ` : ""}${line}`);
    }
  }
}

function waitingAt(arrivalsMs: ArrayLike<number>, firstTokenS: readonly number[], t: number): number {
  let waiting = 0;
  for (let i = 0; i < arrivalsMs.length; i++) if (arrivalsMs[i] / 1000 <= t && firstTokenS[i] > t) waiting++;
  return waiting;
}

interface Served {
  readonly first: number;
  readonly last: number;
  readonly prompt: number;
}

/** One window's batch, context (and waiting queue, when windowed), measured and priced step. */
async function stepLine(
  run: ReturnType<typeof loadCalibrationRuns>[number],
  ok: readonly Served[],
  out: number,
  from: number,
  to: number,
  waiting: (t: number) => number,
): Promise<string | null> {
  let seconds = 0;
  let batchSum = 0;
  let contextSum = 0;
  let waitingSum = 0;
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
    if (Number.isFinite(windowS)) waitingSum += waiting(t);
  }
  const steps = Number.isFinite(windowS)
    ? ok.filter((r) => r.first >= from && r.first < to).map((r) => (r.last - r.first) / (out - 1))
    : ok.filter((r) => r.first >= from && r.last < to).map((r) => (r.last - r.first) / (out - 1));
  if (seconds === 0 || steps.length === 0) return null;
  const batch = batchSum / seconds;
  const context = contextSum / seconds;
  const real = (steps.reduce((a, b) => a + b, 0) / steps.length) * 1000;
  const priced = await pricedStepMs(run.model, run.gpu, run.tensor, Math.round(batch), Math.round(context));
  const pct = ((priced - real) / real) * 100;
  const queue = Number.isFinite(windowS) ? `${(waitingSum / seconds).toFixed(0)}  ` : "";
  return `${batch.toFixed(1)}  ${context.toFixed(0)}  ${queue}${real.toFixed(2)} / ${priced.toFixed(2)} (${pct >= 0 ? "+" : ""}${pct.toFixed(1)} %)`;
}
