import { describe, expect, it } from "vitest";
import { formatNumber } from "../../src/report/formatNumber.js";
import { renderSummaryTable, SUMMARY_TITLE } from "../../src/report/table.js";

describe('formatNumber (Python f"{v:,.2f}")', () => {
  it.each([
    [1234567.891, "1,234,567.89"],
    [0, "0.00"],
    [1, "1.00"],
    [100, "100.00"],
    [999, "999.00"],
    [1000, "1,000.00"],
    [123456, "123,456.00"],
    [-1234.5, "-1,234.50"],
    [-3.5, "-3.50"],
    [-0.004, "-0.00"],
    [-0, "-0.00"],
    [0.005, "0.01"],
    [2.675, "2.67"], // binary value is below the tie
    [1.005, "1.00"],
    [999.995, "1,000.00"],
    [999999.999, "1,000,000.00"],
    [0.125, "0.12"], // exact ties round half to even
    [0.375, "0.38"],
    [0.625, "0.62"],
    [0.875, "0.88"],
    [-2.125, "-2.12"],
    [1e21, "1,000,000,000,000,000,000,000.00"],
    [1.2345678901234569e23, "123,456,789,012,345,685,803,008.00"],
    [5e-324, "0.00"],
  ])("%s → %s", (v, s) => {
    expect(formatNumber(v)).toBe(s);
  });

  it("non-finite and missing values", () => {
    expect(formatNumber(Number.NaN)).toBe("nan");
    expect(formatNumber(Number.POSITIVE_INFINITY)).toBe("inf");
    expect(formatNumber(Number.NEGATIVE_INFINITY)).toBe("-inf");
    expect(formatNumber(null)).toBe("N/A");
    expect(formatNumber(undefined)).toBe("N/A");
  });
});

describe("renderSummaryTable", () => {
  it("renders the exact AIPerf-style table", () => {
    const out = renderSummaryTable({
      mean_ttft_ms: 1234.5,
      min_ttft_ms: -3.5,
      max_ttft_ms: 98765.4321,
      p99_ttft_ms: 9000,
      p90_ttft_ms: 800,
      p75_ttft_ms: 70,
      std_ttft_ms: null,
      median_ttft_ms: 1,
      output_throughput_tok_s: 1234567.891,
      request_throughput_rps: 2.5,
      completed_requests: 10,
      num_requests: 12,
      wall_time_ms: 12.3456,
      prefix_cache_reused_ratio: 0.375,
      first_admission_prefix_cache_reused_ratio: 0.125,
    });
    expect(out).toBe(
      [
        "NVIDIA AIPerf | LLM Metrics",
        "┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━┳━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━┳━━━━━━━┳━━━━━┓",
        "┃ Metric                               ┃          avg ┃   min ┃       max ┃      p99 ┃    p90 ┃   p75 ┃ std ┃",
        "┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━╇━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━╇━━━━━━━╇━━━━━┩",
        "┃ Time to First Token (ms)             ┃     1,234.50 ┃ -3.50 ┃ 98,765.43 ┃ 9,000.00 ┃ 800.00 ┃ 70.00 ┃ N/A ┃",
        "┃ Output Token Throughput (tokens/sec) ┃ 1,234,567.89 ┃   N/A ┃       N/A ┃      N/A ┃    N/A ┃   N/A ┃ N/A ┃",
        "┃ Request Throughput (requests/sec)    ┃         2.50 ┃   N/A ┃       N/A ┃      N/A ┃    N/A ┃   N/A ┃ N/A ┃",
        "┃ Request Count (requests)             ┃        10.00 ┃   N/A ┃       N/A ┃      N/A ┃    N/A ┃   N/A ┃ N/A ┃",
        "└━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┴━━━━━━━━━━━━━━┴━━━━━━━┴━━━━━━━━━━━┴━━━━━━━━━━┴━━━━━━━━┴━━━━━━━┴━━━━━┘",
        "Wall Time (ms): 12.35",
        "Prefix Cache Reused Ratio: 0.38",
        "First Admission Prefix Cache Reused Ratio: 0.12",
        // The table's last line with the Dynamo stack (seed 000 "Run the aggregated baseline").
        "Timing (runner): unavailable",
      ].join("\n"),
    );
    expect(out.includes(String.fromCharCode(27))).toBe(false); // no ANSI colours
  });

  it("emits distribution rows only when mean_<suffix> exists, in the reference's order", () => {
    const out = renderSummaryTable({
      mean_output_token_throughput_per_user: 50,
      mean_itl_ms: 20,
      mean_e2e_latency_ms: 3000,
      mean_ttst_ms: 25,
      mean_ttft_ms: 100,
      mean_tpot_ms: 21, // TPOT has no row
      p99_ttst_ms: 40,
      power_w: 350, // the reference's power rows follow the request count
      power_coverage: 1,
      num_requests: 3,
    });
    const labels = out
      .split("\n")
      .filter((l) => l.startsWith("┃ "))
      .map((l) => l.split("┃")[1].trim());
    expect(labels).toEqual([
      "Metric",
      "Time to First Token (ms)",
      "Time to Second Token (ms)",
      "Request Latency (ms)",
      "Inter Token Latency (ms)",
      "Output Token Throughput Per User (tokens/sec/user)",
      "Output Token Throughput (tokens/sec)",
      "Request Throughput (requests/sec)",
      "Request Count (requests)",
      "Active Power per GPU (W) [power_w]",
      "Power Data Coverage (%) [power_coverage]",
    ]);
    expect(out).toContain("┃ Active Power per GPU (W) [power_w]                 ┃   350.00 ┃");
    expect(out).toContain("┃ Power Data Coverage (%) [power_coverage]           ┃   100.00 ┃");
    const ttst = out.split("\n").find((l) => l.includes("Time to Second Token"));
    expect(ttst?.split("┃").map((c) => c.trim())).toEqual([
      "",
      "Time to Second Token (ms)",
      "25.00",
      "N/A",
      "N/A",
      "40.00",
      "N/A",
      "N/A",
      "N/A",
      "",
    ]);
  });

  it("prints power as the reference does without energy evidence, and one timing line per role of prediction_provenance", () => {
    const provenance = (
      estimator: string,
      source: string,
      version: string | null,
      reason: string | null,
    ) => ({
      estimator,
      timing_source: source,
      data_version: version,
      data_version_unavailable_reason: reason,
      data_identity: null,
    });
    const op = renderSummaryTable({
      num_requests: 1,
      power_w: null,
      power_coverage: 0,
      prediction_provenance: {
        prefill: provenance("op_level", "aic", "0.24.0", null),
        decode: provenance("fixed", "configured", null, "configured timing does not use performance data"),
      },
    });
    expect(op).toContain(
      "┃ Active Power per GPU (W) [power_w]       ┃ unavailable (insufficient energy coverage) ┃",
    );
    expect(op).toContain(
      "┃ Power Data Coverage (%) [power_coverage] ┃                                       0.00 ┃",
    );
    expect(op.split("\n").slice(-2)).toEqual([
      "Timing (prefill): estimator=op_level; source=aic; data_version=0.24.0",
      "Timing (decode): estimator=fixed; source=configured; data_version=unavailable (configured timing does not use performance data)",
    ]);
    // The KV-cache precision lines come before the timing lines, one per role, as the reference's.
    const kv = renderSummaryTable({
      num_requests: 1,
      kv_cache_precision: {
        prefill: { dtype: "fp8", source: "checkpoint" },
        decode: { dtype: "bfloat16", source: "aisimulate_policy" },
      },
      prediction_provenance: { prefill: provenance("op_level", "aic", "0.24.0", null) },
    });
    expect(kv.split("\n").slice(-3)).toEqual([
      "KV cache (prefill): fp8 (source: checkpoint)",
      "KV cache (decode): bfloat16 (source: aisimulate_policy)",
      "Timing (prefill): estimator=op_level; source=aic; data_version=0.24.0",
    ]);
    const fixed = renderSummaryTable({ num_requests: 1, power_w: null, power_coverage: null });
    expect(fixed).toContain("[power_w]       ┃ unavailable (energy provider or topology unsupported) ┃");
    expect(fixed).toContain("[power_coverage] ┃ unavailable (energy provider or topology unsupported) ┃");
    expect(fixed.split("\n").at(-1)).toBe("Timing (runner): unavailable");
  });

  it("omits all distribution rows and trailing lines when absent; Request Count falls back to num_requests", () => {
    const out = renderSummaryTable({ num_requests: 1234, wall_time_ms: null });
    const lines = out.split("\n");
    expect(lines[0]).toBe(SUMMARY_TITLE);
    expect(lines).toHaveLength(9); // title + top + header + rule + 3 rows + bottom + Timing (runner)
    expect(lines[8]).toBe("Timing (runner): unavailable");
    expect(out).toContain("┃ Request Count (requests)             ┃ 1,234.00 ┃");
    expect(out).toContain("┃ Output Token Throughput (tokens/sec) ┃      N/A ┃");
    expect(out).not.toContain("Wall Time");
    expect(out).not.toContain("Prefix Cache");
  });

  it("a present but null completed_requests shows N/A (no fallback)", () => {
    const out = renderSummaryTable({ completed_requests: null, num_requests: 5 });
    expect(out).toContain("┃ Request Count (requests)             ┃ N/A ┃");
  });
});
