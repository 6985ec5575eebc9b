/** `fleetsim schema --prediction`: the JSON Schema of prediction.json, from the strict contract. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { buildPredictionJsonSchema } from "../../src/output/jsonSchema.js";
import { HOST_TIME_KEYS } from "../../src/output/summary.js";
import { GOLDEN_CASES, goldenPath, type Json } from "../golden/cases.js";
import { cli } from "../helpers/cli.js";
import { unknownKeywords, validate } from "../helpers/miniJsonSchema.js";

const VERSION = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

function golden(name: string): { [key: string]: Json } {
  const c = GOLDEN_CASES.find((x) => x.name === name);
  if (c === undefined) throw new Error(name);
  const doc = JSON.parse(readFileSync(goldenPath(c), "utf8")) as { [key: string]: Json };
  for (const k of HOST_TIME_KEYS) (doc["summary"] as { [key: string]: Json })[k] = 1;
  return doc;
}

describe("fleetsim schema --prediction", () => {
  it("prints the prediction.json JSON Schema: versioned $id, keywords a validator knows, no readOnly noise", async () => {
    const r = await cli("schema", "--prediction");
    expect(r.code).toBe(0);
    const schema = JSON.parse(r.out) as { [key: string]: unknown };
    expect(schema).toEqual(JSON.parse(JSON.stringify(buildPredictionJsonSchema(VERSION))));
    expect(schema["$id"]).toBe(`urn:fleetsim:prediction-schema:${VERSION}`);
    expect(unknownKeywords(schema as never)).toEqual([]);
    expect(r.out).not.toContain("readOnly");
  });

  it("a golden prediction validates against it; an unknown or a wrong-typed key does not", () => {
    const schema = buildPredictionJsonSchema(VERSION) as never;
    expect(validate(schema, golden("seed-disaggregated-planner"))).toEqual([]);
    expect(validate(schema, golden("kv-router"))).toEqual([]);
    const extra = golden("kv-router");
    (extra["coverage"] as { [key: string]: Json })["extra"] = 1;
    expect(validate(schema, extra)).not.toEqual([]);
    const wrong = golden("kv-router");
    (wrong["run"] as { [key: string]: Json })["starting_gpus"] = "3";
    expect(validate(schema, wrong)).not.toEqual([]);
  });
});
