/**
 * A valid non-default value of every Planner knob (src/planner/knobs.ts), all at once, keyed by
 * YAML key: the SLA target with load scaling only (so the throughput interval needs no gcd fit),
 * for a disaggregated engine (role minimums) and an SLA of ttft 800 / itl 40 ms. A new knob adds
 * its value here; test/config/plannerKnobs.test.ts fails until it does.
 */
export const SAMPLE_WARMUP_TRACE = "warm/up.jsonl";

export const KNOB_SAMPLE: Readonly<Record<string, unknown>> = {
  policy: "enabled",
  target: "sla",
  enable_throughput_scaling: false,
  enable_load_scaling: true,
  throughput_adjustment_interval_seconds: 240,
  load_adjustment_interval_seconds: 10,
  max_throughput_scaling_replicas: 4,
  max_num_fpm_samples: 32,
  fpm_sample_bucket_size: 9,
  load_scaling_down_sensitivity: 70,
  load_min_observations: 3,
  load_predictor: "kalman",
  load_predictor_log1p: true,
  prophet_window_size: 20,
  kalman_q_level: 2,
  kalman_q_trend: 0.2,
  kalman_r: 5,
  kalman_min_points: 3,
  load_predictor_warmup_trace: SAMPLE_WARMUP_TRACE,
  max_num_gpus: 16,
  min_num_gpus: 2,
  min_workers: 2,
  prefill_min_workers: 2,
  decode_min_workers: 3,
  speculative_nextn: 1,
  advisory: true,
};
