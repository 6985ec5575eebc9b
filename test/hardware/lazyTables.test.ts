import { describe, expect, it } from "vitest";
import { gpuSpec } from "../../src/hardware/catalog.js";
import { decodeCompact } from "../../src/hardware/compact.js";
import { readCompactJson } from "../../src/hardware/compactTables.js";
import { buildGrids, buildOpPerfTables } from "../../src/hardware/tables.js";

// The tables build each grid on its first query and the compact decoder decodes a grid's cells on
// first read (start-up, docs/performance.md): the answers must be those of the grids built eagerly.
describe("op tables built on first query answer as the eagerly built grids", () => {
  const spec = gpuSpec("h200_sxm");
  const data = decodeCompact(readCompactJson("h200_sxm"));
  const eager = buildGrids(decodeCompact(readCompactJson("h200_sxm")), spec);
  const tables = buildOpPerfTables(data, spec);
  const points = [
    [1, 4096, 4096],
    [7, 6144, 4096],
    [333, 14336, 4096],
    [8192, 4096, 14336],
    [100_000, 1024, 512],
  ] as const;

  it("GEMM, every dtype", () => {
    data.gemm.forEach((g, i) => {
      for (const [m, n, k] of points) expect(tables.gemm(g.dtype, m, n, k)).toBe(eager.gemm[i].at3(m, n, k));
    });
  });

  it("decode attention of every measured group, queried in an order unlike the file's", () => {
    const groups = data.generationAttention.map((g, i) => ({ g, i })).reverse();
    for (const { g, i } of groups) {
      const heads = g.kvHeads === 0 ? 32 : g.kvHeads * 4;
      const kvHeads = g.kvHeads === 0 ? heads : g.kvHeads;
      for (const [batch, kv] of [
        [1, 100],
        [64, 4096],
        [256, 30_000],
      ]) {
        expect(
          tables.generationAttention(
            { numHeads: heads, numKvHeads: kvHeads, headDim: g.headDim, kvDtype: g.kvDtype },
            batch,
            kv,
          ),
        ).toBe(eager.generationAttention[i].at3(heads, batch, kv));
      }
    }
  });

  it("decoded data reads the same lazily as a full decode serializes it", () => {
    expect(JSON.stringify(data)).toBe(JSON.stringify(decodeCompact(readCompactJson("h200_sxm"))));
    expect(data.gemm[0].grid.latencyMs).toBe(data.gemm[0].grid.latencyMs); // decoded once
  });
});
