/**
 * `Grid.at3Line` (the decode run's attention lookup) answers exactly what `at3` answers, bit for
 * bit, whatever the sequence of queries: runs along the last axis, knots, brackets crossed,
 * extrapolation on every axis, and queries that change the first two axes between runs.
 */
import { fc, test } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import { loadCompactTables } from "../../src/hardware/compactTables.js";
import { Grid, type GridRules } from "../../src/hardware/grid.js";

const RULES: GridRules = {
  axes: [
    { log: false, values: "lin", below: "extend", above: "extend" },
    { log: true, values: "log", below: "clamp", above: "proportional" },
    { log: false, values: "sqrt", below: "clamp", above: "sqrt" },
  ],
  fillOrder: [2, 1, 0],
};

const xs = [1, 2, 4, 8];
const ys = [1, 3, 9, 27];
const zs = [16, 64, 256, 1024, 4096];
const cells = xs.flatMap((x) =>
  ys.flatMap((y) => zs.map((z) => 0.01 + x * 0.3 + y * y * 0.002 + Math.sqrt(z) * (x % 3))),
);
// A hole, so that filled cells are read too.
cells[7] = Number.NaN;

/** A query on or between knots, or outside the range on either side. */
const coordinate = (knots: number[]) =>
  fc.oneof(
    fc.constantFrom(...knots),
    fc.double({ min: knots[0] / 2, max: knots[knots.length - 1] * 2, noNaN: true }),
  );

describe("Grid.at3Line", () => {
  test.prop([
    fc.array(
      fc.record({
        x: coordinate(xs),
        y: coordinate(ys),
        z0: coordinate(zs),
        steps: fc.integer({ min: 1, max: 40 }),
        dz: fc.oneof(fc.constant(1), fc.double({ min: -50, max: 200, noNaN: true })),
      }),
      { minLength: 1, maxLength: 12 },
    ),
  ])("equals at3 bit for bit along runs of queries", (runs) => {
    const line = new Grid([xs, ys, zs], cells, RULES);
    const plain = new Grid([xs, ys, zs], cells, RULES);
    for (const { x, y, z0, steps, dz } of runs) {
      for (let j = 0; j < steps; j++) {
        const z = z0 + j * dz;
        expect(Object.is(line.at3Line(x, y, z), plain.at3(x, y, z))).toBe(true);
      }
    }
  });

  it("equals at3 on the shipped decode-attention grids over decode runs", () => {
    const tables = loadCompactTables("h200_sxm");
    const heads = [
      { numHeads: 32, numKvHeads: 8, headDim: 128, kvDtype: "bfloat16" as const },
      { numHeads: 8, numKvHeads: 1, headDim: 128, kvDtype: "fp8" as const },
      { numHeads: 20, numKvHeads: 5, headDim: 128, kvDtype: "bfloat16" as const },
    ];
    // The same lookups through a fresh set of tables use `at3` only once per (heads, batch):
    // compare against a table set queried in scrambled order, so no line state is shared.
    const reference = loadCompactTables("h200_sxm");
    let checked = 0;
    for (const h of heads)
      for (const batch of [1, 7, 64, 200, 300])
        for (let ctx = 100; ctx < 9000; ctx += 37) {
          const a = tables.generationAttention(h, batch, ctx);
          reference.generationAttention(h, batch + 1, 5);
          const b = reference.generationAttention(h, batch, ctx);
          expect(Object.is(a, b)).toBe(true);
          checked++;
        }
    expect(checked).toBeGreaterThan(3000);
  });
});
