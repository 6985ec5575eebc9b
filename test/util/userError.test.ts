/**
 * Every user-facing error class extends UserError (src/util/userError.ts), so the CLI's exit-2
 * rule is one `instanceof` (issue 15: it was a list of nine unrelated classes).
 */
import { describe, expect, it } from "vitest";
import { ConvertUsageError } from "../../src/cli/convert.js";
import { EstimateUsageError } from "../../src/cli/estimate.js";
import { isUserError } from "../../src/cli/userErrors.js";
import { ConfigError } from "../../src/config/errors.js";
import { HardwareError } from "../../src/hardware/errors.js";
import { ModelError } from "../../src/model/errors.js";
import { PredictionFileError } from "../../src/report/html/readPrediction.js";
import { OutputDirError } from "../../src/report/outputDir.js";
import { ResourceLimited } from "../../src/resources/errors.js";
import { InvariantViolation } from "../../src/sim/invariants.js";
import { TraceWriteError } from "../../src/traffic/dynamo/writer.js";
import { TraceError } from "../../src/traffic/traceError.js";
import { UserError } from "../../src/util/userError.js";

describe("UserError", () => {
  it("every user-facing error is a UserError; execution failures are not", () => {
    const user = [
      new ConfigError("c.yaml", []),
      new TraceError("t.jsonl", 3, "bad row"),
      new OutputDirError("x"),
      new ModelError("x"),
      new HardwareError("x"),
      new EstimateUsageError("x"),
      new ConvertUsageError("x"),
      new TraceWriteError("x"),
      new PredictionFileError("x"),
    ];
    for (const e of user) {
      expect(e, e.constructor.name).toBeInstanceOf(UserError);
      expect(isUserError(e), e.constructor.name).toBe(true);
    }
    expect(isUserError(new Error("crash"))).toBe(false);
    expect(isUserError(new InvariantViolation("INV-2", "kv"))).toBe(false);
    expect(isUserError(new ResourceLimited("rss over budget"))).toBe(false);
  });
});
