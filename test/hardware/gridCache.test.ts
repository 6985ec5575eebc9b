import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gpuSpec } from "../../src/hardware/catalog.js";
import { decodeCompact } from "../../src/hardware/compact.js";
import { loadCompactTables, readCompactJson } from "../../src/hardware/compactTables.js";
import { fileGridStore, setGridStore } from "../../src/hardware/gridCache.js";
import { buildGrids } from "../../src/hardware/tables.js";
import { tempDir } from "../helpers/specs.js";

// Built grids kept between runs (hardware/gridCache.ts): a grid read back must answer exactly as
// the one built from the tables, and a damaged file must cost only the rebuild.
describe("grid store", () => {
  afterEach(() => setGridStore(null));
  const spec = gpuSpec("h200_sxm");
  const eager = buildGrids(decodeCompact(readCompactJson("h200_sxm")), spec);
  const data = decodeCompact(readCompactJson("h200_sxm"));
  const queries = (tables: ReturnType<typeof loadCompactTables>): number[] => {
    const out: number[] = [];
    for (const g of data.gemm)
      for (const [m, n, k] of [
        [1, 4096, 4096],
        [333, 14336, 4096],
        [100_000, 1024, 512],
      ])
        out.push(tables.gemm(g.dtype, m, n, k));
    for (const g of data.generationAttention) {
      const heads = g.kvHeads === 0 ? 32 : g.kvHeads * 4;
      out.push(
        tables.generationAttention(
          {
            numHeads: heads,
            numKvHeads: g.kvHeads === 0 ? heads : g.kvHeads,
            headDim: g.headDim,
            kvDtype: g.kvDtype,
          },
          64,
          4096,
        ),
      );
    }
    for (const g of data.contextAttention) {
      const heads = g.kvHeads === 0 ? 32 : g.kvHeads * 4;
      out.push(
        tables.contextAttention(
          {
            numHeads: heads,
            numKvHeads: g.kvHeads === 0 ? heads : g.kvHeads,
            headDim: g.headDim,
            kvDtype: g.kvDtype,
          },
          2,
          1000,
          200,
        ),
      );
    }
    out.push(tables.allReduce(2, 1 << 20), tables.allReduce(8, 1 << 16));
    return out;
  };
  const fresh = queries(loadCompactTables("h200_sxm"));

  it("writes each grid a run builds and reads it back: the same answers, bit for bit", () => {
    const dir = tempDir("fleetsim-grids-");
    setGridStore(fileGridStore(dir, "build-a"));
    expect(queries(loadCompactTables("h200_sxm"))).toEqual(fresh);
    const files = readdirSync(dir).filter((f) => f.endsWith(".grid"));
    expect(files.length).toBeGreaterThan(data.gemm.length);
    for (const f of files) expect(f.startsWith("build-a-")).toBe(true);
    // A second process of the same build: every grid comes from its file (the files are kept as
    // they are) and answers as the built one.
    const before = files.map((f) => readFileSync(join(dir, f)));
    setGridStore(fileGridStore(dir, "build-a"));
    expect(queries(loadCompactTables("h200_sxm"))).toEqual(fresh);
    expect(files.map((f) => readFileSync(join(dir, f)))).toEqual(before);
    expect(fresh[0]).toBe(eager.gemm[0].at3(1, 4096, 4096));
  });

  it("a file read back is the stored grid, not a rebuild: its cells are what it holds", () => {
    const dir = tempDir("fleetsim-grids-");
    const store = fileGridStore(dir, "b");
    const built = eager.gemm[0];
    const rules = {
      axes: [0, 1, 2].map(() => ({
        log: true,
        values: "log" as const,
        below: "clamp" as const,
        above: "extend" as const,
      })),
      fillOrder: [2, 1, 0],
    };
    store.grid("k", rules, () => built);
    let rebuilt = 0;
    const back = store.grid("k", rules, () => {
      rebuilt++;
      return built;
    });
    expect(rebuilt).toBe(0);
    expect(Array.from(back.values)).toEqual(Array.from(built.values));
    expect(Array.from(back.measured)).toEqual(Array.from(built.measured));
    expect(back.knots.map((k) => Array.from(k))).toEqual(built.knots.map((k) => Array.from(k)));
  });

  it("rebuilds (and rewrites) a truncated, foreign or garbled file; another build's key never matches", () => {
    const dir = tempDir("fleetsim-grids-");
    setGridStore(fileGridStore(dir, "build-a"));
    queries(loadCompactTables("h200_sxm"));
    const files = readdirSync(dir).filter((f) => f.endsWith(".grid"));
    const original = files.map((f) => readFileSync(join(dir, f)));
    files.forEach((f, i) => {
      const bytes = readFileSync(join(dir, f));
      const damaged =
        i % 3 === 0
          ? bytes.subarray(0, bytes.length - 1)
          : i % 3 === 1
            ? Buffer.alloc(64, 9)
            : Buffer.from(bytes).fill(7, bytes.length - 33, bytes.length - 32);
      writeFileSync(join(dir, f), damaged);
    });
    setGridStore(fileGridStore(dir, "build-a"));
    expect(queries(loadCompactTables("h200_sxm"))).toEqual(fresh);
    // Each damaged file was rejected and written anew.
    expect(files.map((f) => readFileSync(join(dir, f)))).toEqual(original);
    setGridStore(fileGridStore(dir, "build-b"));
    expect(queries(loadCompactTables("h200_sxm"))).toEqual(fresh);
    expect(readdirSync(dir).filter((f) => f.startsWith("build-b-")).length).toBe(files.length);
  });
});
