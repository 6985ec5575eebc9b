import type { TimingSpec } from "../config/runSpec.js";
import { FixedTiming } from "./fixed.js";
import { PolynomialTiming } from "./polynomial.js";
import type { TimingModel } from "./timingModel.js";

export type { TimingModel } from "./timingModel.js";

export function createTimingModel(spec: TimingSpec): TimingModel {
  switch (spec.type) {
    case "polynomial":
      return new PolynomialTiming();
    case "fixed":
      return new FixedTiming(spec.prefillMs, spec.decodeMs);
  }
}
