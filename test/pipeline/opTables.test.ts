/**
 * `timing.op_tables` (docs/backends.md "Timing"): SGLang and TRT-LLM roles are priced from the
 * vLLM op tables by default, or from their backend's own tables with `op_tables: backend`; the
 * run says which, and names what the backend's tables lack.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { runPrediction } from "../../src/pipeline/run.js";

const EXAMPLE = fileURLToPath(new URL("../../examples/aggregated.yaml", import.meta.url));
const ROLE = "engine.workers.aggregated";
const BACKEND_TABLES = `${ROLE}.timing={type: default, op_tables: backend}`;

async function run(...sets: string[]) {
  const warnings: string[] = [];
  const spec = loadConfig({ configPath: EXAMPLE, sets, stack: "engine" });
  const outcome = await runPrediction(spec, { capturePerRequest: false }, { warn: (l) => warnings.push(l) });
  return { ...outcome, warnings, summary: outcome.prediction.summary as unknown as Record<string, number> };
}

describe("timing.op_tables", () => {
  it("prices an SGLang run from vLLM's tables by default and says how to pick SGLang's", async () => {
    const r = await run("engine.backend=sglang");
    expect(r.prediction.run?.topology.aggregated?.timing_backend).toBe("vllm");
    expect(r.warnings).toContain(
      "engine.backend 'sglang': its scheduler is simulated, but passes on h200_sxm are priced from the vLLM op tables " +
        "(the default; timing.op_tables: backend prices them from the SGLang tables); expect kernel-level differences",
    );
  });

  for (const backend of ["sglang", "trtllm"] as const) {
    it(`op_tables: backend prices a ${backend} run from its own tables`, async () => {
      const own = await run(`engine.backend=${backend}`, BACKEND_TABLES);
      const borrowed = await run(`engine.backend=${backend}`);
      expect(own.prediction.run?.topology.aggregated?.timing_backend).toBeUndefined();
      expect(own.warnings.some((w) => w.includes("op tables"))).toBe(false);
      // Same scheduler and trace, other kernels: the token gaps move.
      expect(own.summary["completed_requests"]).toBe(borrowed.summary["completed_requests"]);
      expect(own.summary["mean_itl_ms"]).not.toBe(borrowed.summary["mean_itl_ms"]);
    });
  }

  it("names the groups the backend's tables lack (L40S SGLang: FP8-KV attention)", async () => {
    const r = await run("engine.backend=sglang", "engine.hardware=l40s", BACKEND_TABLES);
    expect(r.warnings).toContain(
      "engine.backend 'sglang': passes on l40s are priced from the SGLang 0.5.9 op tables, but context attention fp8 KV " +
        "head dim 128, generation attention fp8 KV head dim 128 from the vLLM tables (the SGLang tables have no such rows)",
    );
    expect(r.prediction.run?.topology.aggregated?.timing_backend).toBeUndefined();
  });

  it("changes nothing on a vLLM run", async () => {
    const own = await run(BACKEND_TABLES);
    const plain = await run();
    const host = new Set(["wall_time_ms", "processed_tokens_per_s", "processed_output_tokens_per_s"]);
    const sim = (s: Record<string, number>) => Object.entries(s).filter(([k]) => !host.has(k));
    expect(sim(own.summary)).toEqual(sim(plain.summary));
  });

  it("is a default-timing key, with vllm or backend", () => {
    expect(() =>
      loadConfig({
        configPath: EXAMPLE,
        sets: [`${ROLE}.timing={type: polynomial, op_tables: backend}`],
        stack: "engine",
      }),
    ).toThrow(/engine\.workers\.aggregated\.timing\.type='polynomial' does not accept \['op_tables'\]/);
    expect(() =>
      loadConfig({
        configPath: EXAMPLE,
        sets: [`${ROLE}.timing={type: default, op_tables: sglang}`],
        stack: "engine",
      }),
    ).toThrow(/op_tables/);
  });
});
