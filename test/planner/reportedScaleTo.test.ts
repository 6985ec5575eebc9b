import { describe, expect, it } from "vitest";
import { reportedScaleTo } from "../../src/planner/plannerCore.js";
import { workerCounts as counts } from "../helpers/planner.js";

describe("reportedScaleTo (a tick's scale_to in the reference's form)", () => {
  it("names the unchanged role of a disaggregated decision at its ready count", () => {
    expect(reportedScaleTo({ numPrefill: 2, numDecode: null }, counts(1, 3), "disagg")).toEqual({
      numPrefill: 2,
      numDecode: 3,
    });
    expect(reportedScaleTo({ numPrefill: null, numDecode: 1 }, counts(2, 3), "disagg")).toEqual({
      numPrefill: 2,
      numDecode: 1,
    });
  });

  it("leaves no decision, an aggregated decision and a role with no ready worker as they are", () => {
    expect(reportedScaleTo(null, counts(1, 1), "disagg")).toBeNull();
    expect(reportedScaleTo({ numPrefill: null, numDecode: 2 }, counts(null, 1), "agg")).toEqual({
      numPrefill: null,
      numDecode: 2,
    });
    expect(reportedScaleTo({ numPrefill: 2, numDecode: null }, counts(1, 0), "disagg")).toEqual({
      numPrefill: 2,
      numDecode: null,
    });
  });
});
