/**
 * `fleetsim predict --detail SECTIONS` (docs/output.md "Details"): the reference's `details` block
 * and, on the engine stack, `memory_diagnostics`; each role's KV capacity estimate as the memory
 * model sized it, the sections fleetsim does not produce listed under `details.skipped`.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { predictionSchema } from "../../src/output/prediction.js";
import { cli } from "../helpers/cli.js";
import { tempDir } from "../helpers/specs.js";

const EXAMPLE = "examples/aggregated.yaml";
/** A disaggregated config whose trace ships with the repository (the seed example reads ../shared). */
const DISAGG = "test/golden/configs/disaggregated.yaml";

/** `predict -c config …args` into a fresh directory: the exit code, stderr and the document written. */
async function run(config: string, ...args: string[]) {
  const out = join(tempDir("fleetsim-detail-"), "out");
  const r = await cli("predict", "-c", config, "--output-dir", out, "--format", "json", ...args);
  const file = join(out, "prediction.json");
  const doc = existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>) : null;
  return { code: r.code, err: r.err, doc };
}

/** A successful run's document, checked against the strict schema. */
async function predict(config: string, ...args: string[]): Promise<Record<string, unknown>> {
  const r = await run(config, ...args);
  if (r.code !== 0 || r.doc === null) throw new Error(r.err);
  predictionSchema.parse(r.doc);
  return r.doc;
}

/**
 * The reference's estimate for the example (Llama-3.1-8B-Instruct-FP8 on one H200, `memory_fraction`
 * 0.9, 8,192 batched tokens): `aisimulate predict --detail memory` (aisimulate 0.13.0, its
 * `memory_diagnostics.aggregated`), every number of which fleetsim's memory model reproduces.
 */
const REFERENCE_AGGREGATED = {
  estimated_num_gpu_blocks: 29249,
  kv_size_per_token_bytes: 65536,
  kvcache_quant_mode: "fp8",
  memory_breakdown: {
    activations_bytes: 738197504,
    comm_overhead_bytes: 0,
    cuda_graph_reserved_bytes: 0,
    runtime_overhead_bytes: 3758096384,
    weights_bytes: 9080668160,
  },
  scheduler_block_size_tokens: 64,
  scope: "capacity_estimate_per_rank",
  stage: "before_native_capacity_adjustments",
  status: "available",
  tolerance_adjusted: null,
  total_gpu_capacity_bytes: 151397597184,
  total_kv_size_bytes: 122680875417,
  total_kv_size_tokens: 1871961,
};

describe("predict --detail", () => {
  it("memory on the engine stack: each role's estimate in details and at the top level, as the reference's", async () => {
    const doc = await predict(EXAMPLE, "--stack", "engine", "--detail", "memory");
    const expected = { ...REFERENCE_AGGREGATED, source: "fleetsim" };
    expect(doc.memory_diagnostics).toEqual({ aggregated: expected });
    expect(doc.details).toEqual({
      schema_version: "1.0",
      sections: {
        memory: { roles: { aggregated: expected }, scope: "capacity_estimate_per_rank", status: "available" },
      },
      skipped: {},
    });
    const info = doc.run as { topology: { aggregated: { kv_blocks: number } } };
    expect(info.topology.aggregated.kv_blocks).toBe(expected.estimated_num_gpu_blocks);
  });

  it("all: memory, and the sections fleetsim does not produce under skipped, each noted on stderr", async () => {
    const r = await run(EXAMPLE, "--stack", "engine", "--detail", "all");
    expect(r.code).toBe(0);
    const doc = r.doc as { details: { skipped: object } };
    expect(Object.keys(doc.details.skipped).sort()).toEqual(["energy", "source", "summary", "time"]);
    for (const s of ["summary", "time", "energy", "source"]) {
      expect(r.err).toContain(`fleetsim: note: --detail ${s}: fleetsim does not produce this section`);
    }
  });

  it("a configured capacity has no estimate: memory is skipped, role by role, as the reference does", async () => {
    const doc = await predict(
      EXAMPLE,
      "--stack",
      "engine",
      "--detail",
      "memory",
      "--set",
      "engine.workers.aggregated.kv_cache.capacity={type: fixed, blocks: 4000}",
    );
    const details = doc.details as { sections: object; skipped: { memory: string } };
    expect(details.sections).toEqual({});
    expect(details.skipped.memory).toMatch(/^aggregated: explicit KV capacity/);
    expect(doc.memory_diagnostics).toEqual({
      aggregated: {
        scope: "capacity_estimate_per_rank",
        stage: "before_native_capacity_adjustments",
        status: "unavailable",
        unavailable_reason: expect.stringMatching(/^explicit KV capacity/),
      },
    });
  });

  it("the Dynamo stack writes details with both roles of a disaggregated deployment, no top-level block", async () => {
    const doc = await predict(DISAGG, "--stack", "dynamo", "--detail", "memory");
    expect(doc.memory_diagnostics).toBeUndefined();
    const memory = (doc.details as { sections: { memory: { roles: Record<string, { status: string }> } } })
      .sections.memory;
    expect(Object.keys(memory.roles).sort()).toEqual(["decode", "prefill"]);
    for (const role of Object.values(memory.roles)) expect(role.status).toBe("available");
  });

  it("without --detail there is neither block", async () => {
    const doc = await predict(EXAMPLE, "--stack", "engine");
    expect(doc.details).toBeUndefined();
    expect(doc.memory_diagnostics).toBeUndefined();
  });

  it("an unknown section is a usage error (exit 2) naming the choices, and writes nothing", async () => {
    const r = await run(EXAMPLE, "--detail", "memory,power");
    expect(r.code).toBe(2);
    expect(r.err).toContain("--detail: unknown section 'power'");
    expect(r.err).toContain("summary, memory, time, energy, source, all");
    expect(r.doc).toBeNull();
  });
});
