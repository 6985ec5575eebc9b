/**
 * The calibration runs of the fidelity benchmark (bench/fidelity/calibration/, docs/fidelity.md
 * "Calibration runs"): the derived data is well formed, and a fast subset of four runs (one per
 * model, the Llama-2-7B one with its knee stage) replays within today's per-stage error plus
 * about two points. A timing or scheduling change that loses fidelity at these loads fails here;
 * tighten the bounds as fidelity improves, never loosen them to let a change through.
 */
import { describe, expect, it } from "vitest";
import {
  arrivalsMs,
  type CalibrationRun,
  isOverload,
  loadCalibrationRuns,
  promptsSent,
  simulateCalibrationRun,
  stageOf,
} from "../../bench/fidelity/calibration.js";

/** The client's fixed overhead fitted on all four models (calibrationReport.ts; docs/fidelity.md). */
const CLIENT_OVERHEAD_MS = 7.9;

const runs = loadCalibrationRuns();
const byId = (suffix: string): CalibrationRun => {
  const r = runs.find((x) => x.id.endsWith(suffix));
  if (r === undefined) throw new Error(suffix);
  return r;
};
const ape = (pred: number, real: number) => (Math.abs(pred - real) / real) * 100;

describe("calibration runs (inference-sim/training)", () => {
  it("holds 16 runs, 4 models × 4 workloads, each stage's requests, 100 prompts and monotone arrivals", () => {
    expect(runs).toHaveLength(16);
    expect(new Set(runs.map((r) => r.model)).size).toBe(4);
    expect(new Set(runs.map((r) => r.workload.kind))).toEqual(
      new Set(["codegen", "roleplay", "general", "reasoning"]),
    );
    for (const r of runs) {
      const n = r.arrivalUsDeltas.length;
      expect(
        r.workload.stages.reduce((a, s) => a + s.requests, 0),
        r.id,
      ).toBe(n);
      expect(r.measured.stages).toHaveLength(r.workload.stages.length);
      r.workload.stages.forEach((s, k) => {
        const m = r.measured.stages[k];
        expect(m.completed + m.failures, `${r.id} stage ${k}`).toBe(s.requests);
      });
      expect(r.promptLengths).toHaveLength(r.workload.numGroups * r.workload.promptsPerGroup);
      const times = arrivalsMs(r);
      const sent = promptsSent(r);
      const unordered: number[] = [];
      const farPrompt: number[] = [];
      for (let i = 0; i < n; i++) {
        if (i > 0 && times[i] < times[i - 1]) unordered.push(i);
        // A request sends the prompt of its place in the cycle, or a neighbour's (within 5).
        const d = Math.abs(sent[i] - (i % r.promptLengths.length));
        if (Math.min(d, r.promptLengths.length - d) > 5) farPrompt.push(i);
      }
      expect(unordered, `${r.id}: arrivals out of order`).toEqual([]);
      expect(farPrompt, `${r.id}: prompts far from their cycle place`).toEqual([]);
      expect(stageOf(r)[n - 1]).toBe(r.workload.stages.length - 1);
    }
    expect(runs.filter(isOverload)).toHaveLength(4);
    // Only the overloaded runs failed, and their failures start at one request (the collapse).
    for (const r of runs) expect(r.outcome.firstFailure === null, r.id).toBe(!isOverload(r));
  });

  // [run, per-stage bounds on |APE| %: TTFT (with the client overhead), E2E, ITL]
  const cases: ReadonlyArray<[string, ReadonlyArray<readonly [number, number, number]>]> = [
    [
      "codellama-34b-tp2-codegen",
      [
        [4, 6, 6],
        [4, 3, 3],
      ],
    ],
    ["llama-2-70b-tp4-roleplay", [[9, 9, 9]]],
    // Its passes priced at vLLM's padded CUDA-graph sizes (docs/timing.md "CUDA-graph padding"),
    // which the fused-MoE cells grow with: ITL +4.5 → +7.1 % (2026-12-06).
    ["mixtral-8x7b-v0-1-tp2-roleplay", [[7, 9, 9]]],
    // Llama-2-7B (MHA: decode attention on the HBM roofline), its knee stage included.
    [
      "llama-2-7b-tp1-codegen",
      [
        [8, 6, 6],
        [6, 5, 5],
      ],
    ],
  ];
  // The overloaded runs collapse (docs/fidelity.md "Calibration runs", item 3): once the queue's
  // wait plus a request's decode passes the client's 300 s timeout, FIFO admission keeps serving
  // requests whose clients are about to give up, so from the first timeout on none succeeds
  // (measured: 0 of 4,068, 1,600 and 3,294 requests after it). Llama-2-7B's, the one whose step
  // at 128 sequences of ~1,800 tokens is priced within a few %, holds the collapse's shape.
  it("llama-2-7b-tp1-reasoning: the overload collapses as measured (first timeout, failures, none served after)", async () => {
    const run = byId("llama-2-7b-tp1-reasoning");
    const p = await simulateCalibrationRun(run, { requestMs: CLIENT_OVERHEAD_MS });
    expect(p.saturated).toBe(true);
    const failed = p.stages.reduce((a, s) => a + s.failures, 0);
    expect(ape(failed, run.measured.summary.failures)).toBeLessThanOrEqual(5);
    const at = arrivalsMs(run);
    const first = run.outcome.firstFailure;
    const predictedFirst = p.outcome.firstFailure;
    expect(first).not.toBeNull();
    expect(predictedFirst).not.toBeNull();
    if (first === null || predictedFirst === null) return;
    expect(run.outcome.succeededAfterFirstFailure).toBe(0);
    // 180.7 s measured, 203.9 s replayed (2026-12-07).
    expect(ape(at[predictedFirst], at[first])).toBeLessThanOrEqual(15);
    expect(p.outcome.succeededAfterFirstFailure).toBeLessThanOrEqual(0.01 * (at.length - predictedFirst));
  });

  for (const [suffix, bounds] of cases)
    it(`${suffix}: every stage holds, within today's error per stage`, async () => {
      const run = byId(suffix);
      const p = await simulateCalibrationRun(run, { requestMs: CLIENT_OVERHEAD_MS });
      expect(p.saturated).toBe(false);
      bounds.forEach(([ttft, e2e, itl], k) => {
        const m = run.measured.stages[k];
        const s = p.stages[k];
        expect(s.failures, `stage ${k} failures`).toBe(0);
        expect(ape(s.ttftMeanMs, m.ttftMeanMs), `stage ${k} TTFT`).toBeLessThanOrEqual(ttft);
        expect(ape(s.e2eMeanMs, m.e2eMeanMs), `stage ${k} E2E`).toBeLessThanOrEqual(e2e);
        expect(ape(s.itlMeanMs, m.itlMeanMs), `stage ${k} ITL`).toBeLessThanOrEqual(itl);
      });
    });
});
