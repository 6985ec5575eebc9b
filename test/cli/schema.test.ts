import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { buildConfigJsonSchema, configSchemaId } from "../../src/cli/schema.js";
import { PredictConfig } from "../../src/config/schema/index.js";
import { cli } from "../helpers/cli.js";
import { loadYaml, RUNNABLE_ENGINE, RUNNABLE_PD_ENGINE, tempDir } from "../helpers/configHelpers.js";
import { syntheticTraffic } from "../helpers/configYaml.js";
import { unknownKeywords, validate } from "../helpers/miniJsonSchema.js";
import { SEED_001 } from "../helpers/seed001.js";

const VERSION = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;
const schema = buildConfigJsonSchema(VERSION);

type Node = Record<string, unknown>;

/** Every object node of the schema, with its JSON pointer. */
function objectNodes(node: unknown, at = "#"): { at: string; node: Node }[] {
  if (typeof node !== "object" || node === null) return [];
  if (Array.isArray(node)) return node.flatMap((n, i) => objectNodes(n, `${at}/${i}`));
  const out: { at: string; node: Node }[] = [];
  const n = node as Node;
  if (n["type"] === "object") out.push({ at, node: n });
  for (const [key, value] of Object.entries(n)) {
    if (key === "default" || key === "const" || key === "enum") continue;
    out.push(...objectNodes(value, `${at}/${key}`));
  }
  return out;
}

const props = (node: unknown, ...path: string[]): Node => {
  let n = node as Node;
  for (const key of path) n = (n["properties"] as Record<string, Node>)[key];
  return n;
};

describe("fleetsim config JSON Schema: structure", () => {
  it("is draft 2020-12 with $id, title and description, using only keywords the checker knows", () => {
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(schema.$id).toBe(configSchemaId(VERSION));
    expect(schema.title).toContain("fleetsim");
    expect(typeof schema.description).toBe("string");
    expect(unknownKeywords(schema as Node)).toEqual([]);
    expect(Object.keys(schema).slice(0, 4)).toEqual(["$schema", "$id", "title", "description"]);
  });

  it("lists every top-level config key, requires engine and forbids others", () => {
    expect(Object.keys(schema.properties ?? {})).toEqual(Object.keys(PredictConfig.shape));
    expect(schema.required).toEqual(["engine"]);
    expect(schema.additionalProperties).toBe(false);
  });

  it("every object is strict (additionalProperties: false), as the loader's zod objects are", () => {
    const nodes = objectNodes(schema);
    expect(nodes.length).toBeGreaterThan(30);
    const loose = nodes.filter(({ node }) => node["additionalProperties"] !== false).map(({ at }) => at);
    expect(loose).toEqual([]);
  });

  it("carries enums and defaults: router policy, load type, engine modes", () => {
    const policy = props(schema, "router", "policy");
    expect(policy["enum"]).toEqual(["round_robin", "kv_router"]);
    expect(policy["default"]).toBe("round_robin");
    expect(props(schema, "traffic", "load", "type")["enum"]).toContain("trace_timestamps");
    const engine = props(schema, "engine");
    const modes = (engine["oneOf"] as Node[]).map((b) => (props(b, "mode") as Node)["const"]);
    expect(modes).toEqual(["aggregated", "disaggregated"]);
  });

  it("keys fleetsim rejects are `not: {}` with the loader's reason; integers carry no safe-integer noise", () => {
    const knob = props((props(schema, "engine")["oneOf"] as Node[])[0], "moe_backend");
    expect(knob["not"]).toEqual({});
    expect(knob["description"]).toBe("moe_backend is not supported by fleetsim yet");
    expect(JSON.stringify(schema)).not.toContain(String(Number.MAX_SAFE_INTEGER));
  });

  it("is deterministic", () => {
    expect(JSON.stringify(buildConfigJsonSchema(VERSION))).toBe(JSON.stringify(schema));
  });
});

/** Configs fleetsim accepts: the bundled examples and the test suites' shared config blocks. */
function acceptedConfigs(): [string, unknown][] {
  const examples = readdirSync("examples")
    .filter((f) => f.endsWith(".yaml"))
    .map((f): [string, unknown] => [`examples/${f}`, parse(readFileSync(join("examples", f), "utf8"))]);
  const blocks: [string, string][] = [
    ["RUNNABLE_ENGINE", RUNNABLE_ENGINE],
    ["RUNNABLE_PD_ENGINE", RUNNABLE_PD_ENGINE],
    ["seed aggregated", SEED_001.traffic + SEED_001.aggregatedEngine + SEED_001.routerAndSla],
    ["seed disaggregated", SEED_001.traffic + SEED_001.disaggregatedEngine + SEED_001.routerAndSla],
    [
      "synthetic poisson, kv router, planner",
      `${syntheticTraffic("{type: poisson, requests_per_second: 4, seed: 7}", "{requests: 50}", [512, 64])}${RUNNABLE_ENGINE}router: {policy: kv_router, temperature: 0.5, prefill_load_model: {type: aic}}
planner:
  policy: enabled
  target: sla
  enable_throughput_scaling: true
  load_adjustment_interval_seconds: 10
  max_num_gpus: 4
evaluation: {sla: {e2e_ms: 2000}}
execution: {resources: {memory_limit_gb: 8, cpu_limit: auto}}
`,
    ],
    [
      "retune",
      `traffic:
  source: {type: trace, format: dynamo, paths: [replay.jsonl]}
  load: {type: trace_timestamps}
${RUNNABLE_ENGINE}router: {policy: kv_router}
planner:
  policy: enabled
  enable_load_scaling: false
  retune:
    interval_seconds: 600
    max_parallel: 2
    router:
      overlap_score_credit: 1.0
      prefill_load_scale: {choices: [0.5, 1.0, 2.0]}
      temperature: {choices: [0.0, 1.0]}
`,
    ],
  ];
  return [...examples, ...blocks.map(([name, text]): [string, unknown] => [name, parse(text)])];
}

describe("fleetsim config JSON Schema: configs", () => {
  it("the checker itself rejects what it should (guards against a vacuous validator)", () => {
    expect(validate({ type: "object", additionalProperties: false }, { a: 1 })).not.toEqual([]);
    expect(validate({ type: "integer", minimum: 1 }, 0)).not.toEqual([]);
    expect(validate({ oneOf: [{ const: 1 }, { type: "integer" }] }, 1)).not.toEqual([]);
    expect(validate({ not: {} }, null)).not.toEqual([]);
  });

  it.each(acceptedConfigs())("%s validates against the schema", (_name, config) => {
    expect(validate(schema as Node, config)).toEqual([]);
  });

  it("the test config blocks are ones the loader accepts (so the check above is meaningful)", () => {
    expect(() => loadYaml(RUNNABLE_ENGINE)).not.toThrow();
    expect(() => loadYaml(RUNNABLE_PD_ENGINE)).not.toThrow();
  });

  it.each([
    ["a misspelled top-level key", `routr: {}\n${RUNNABLE_ENGINE}`, "$.routr"],
    ["a misspelled enum value", `router: {policy: kv_routr}\n${RUNNABLE_ENGINE}`, "$.router.policy"],
    ["an unsupported reference knob", `${RUNNABLE_ENGINE}  moe_backend: deepep_moe\n`, "$.engine"],
    [
      "speculation with a rate out of [0, 1]",
      `${RUNNABLE_ENGINE}  speculation: {num_speculative_tokens: 1, acceptance_rates: [2]}\n`,
      "$.engine",
    ],
    [
      "prefill workers without mode: disaggregated",
      RUNNABLE_PD_ENGINE.replace("  mode: disaggregated\n", ""),
      "$.engine",
    ],
    [
      "a wrongly typed value",
      `traffic: {stop: {requests: "10"}}\n${RUNNABLE_ENGINE}`,
      "$.traffic.stop.requests",
    ],
    ["no engine", "router: {policy: round_robin}\n", "missing required 'engine'"],
  ])("rejects %s", (_name, text, where) => {
    const errors = validate(schema as Node, parse(text));
    expect(errors.join("\n")).toContain(where);
  });
});

describe("fleetsim schema", () => {
  it("prints the schema on stdout", async () => {
    const r = await cli("schema");
    expect(r.code).toBe(0);
    expect(r.err).toBe("");
    expect(r.out).toBe(`${JSON.stringify(schema, null, 2)}\n`);
  });

  it("-o writes it to a file (creating directories) and says so on stderr", async () => {
    const file = join(tempDir(), "nested", "fleetsim.schema.json");
    const r = await cli("schema", "-o", file);
    expect(r.code).toBe(0);
    expect(r.out).toBe("");
    expect(r.err).toContain(file);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(JSON.parse(JSON.stringify(schema)));
  });
});
