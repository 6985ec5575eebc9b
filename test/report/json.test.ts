import { describe, expect, it } from "vitest";
import { stableLine, stableStringify } from "../../src/report/json.js";

describe("deterministic JSON", () => {
  it("sorts keys at every level and writes non-finite numbers as null, in arrays too", () => {
    const doc = {
      b: [3, 1.5, -0, 2e-7],
      a: { z: Number.NaN, y: [1, Number.POSITIVE_INFINITY, 2], x: [{ d: 1, c: undefined, b: [0.1] }] },
    };
    expect(stableLine(doc)).toBe(
      '{"a":{"x":[{"b":[0.1],"d":1}],"y":[1,null,2],"z":null},"b":[3,1.5,0,2e-7]}',
    );
    expect(JSON.parse(stableStringify(doc))).toEqual(JSON.parse(stableLine(doc)));
  });

  it("leaves the document it is given as it was", () => {
    const series = [1, 2, 3];
    const doc = { s: series, t: [Number.NaN] };
    stableStringify(doc);
    expect(doc).toEqual({ s: [1, 2, 3], t: [Number.NaN] });
    expect(doc.s).toBe(series);
  });
});
