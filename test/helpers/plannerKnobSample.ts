/**
 * Every Planner knob set to its table example (`example` in src/knobs/planner.ts), all at once,
 * keyed by YAML key: the SLA target with load scaling only (so the throughput interval needs no
 * gcd fit), for a disaggregated engine (role minimums) and an SLA of ttft 800 / itl 40 ms. A new
 * row brings its example, so the tests that loop over this sample cover it without an edit here.
 */
import { type KnobRow, PLANNER_KNOBS } from "../../src/knobs/planner.js";

export const KNOB_SAMPLE: Readonly<Record<string, unknown>> = Object.fromEntries(
  (PLANNER_KNOBS as readonly KnobRow[]).map((row) => [row.yaml, row.example]),
);

/** The sample's `load_predictor_warmup_trace` (tests provide a file under that name). */
export const SAMPLE_WARMUP_TRACE = KNOB_SAMPLE["load_predictor_warmup_trace"] as string;
