/**
 * The committed built-in catalog (src/model/catalog.json) is what scripts/derive-model-catalog.ts
 * derives now from the reference HF configs in ../shared/model-configs (npm run test:shared).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildCatalog, catalogText } from "../../scripts/derive-model-catalog.js";
import { MODEL_CONFIGS, ROOT } from "./data.js";

describe("built-in catalog = derivation from ../shared/model-configs", () => {
  it("catalog.json is what the derive script produces", () => {
    const committed = readFileSync(join(ROOT, "src", "model", "catalog.json"), "utf8");
    expect(
      catalogText(buildCatalog(MODEL_CONFIGS)),
      "src/model/catalog.json is stale: run `node --import tsx scripts/derive-model-catalog.ts` and commit it",
    ).toBe(committed);
  });
});
