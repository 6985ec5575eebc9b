import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lookupMaxContextLength } from "../../src/config/contextLength.js";
import { contextLengthFromConfig as contextLengthFromHfConfig } from "../../src/model/hfConfig.js";
import { hfHubCacheDir } from "../../src/model/resolve.js";
import { aggregatedRole, loadYaml, tempDir, writeFiles } from "../helpers/configHelpers.js";

const engineFor = (model: string) => `engine:
  model: ${model}
  hardware: h200_sxm
  workers:
    aggregated:
      kv_cache: {capacity: {type: fixed, blocks: 10}}
      timing: {type: polynomial}
`;

describe("contextLengthFromHfConfig", () => {
  it("uses the first key in reference order", () => {
    expect(contextLengthFromHfConfig({ n_positions: 1024, seq_length: 2048, model_max_length: 4096 })).toBe(
      4096,
    );
    expect(contextLengthFromHfConfig({ n_positions: 1024 })).toBe(1024);
  });

  it("prefers text_config over the root", () => {
    expect(
      contextLengthFromHfConfig({
        max_position_embeddings: 8192,
        text_config: { max_position_embeddings: 32768 },
      }),
    ).toBe(32768);
    // A text_config without a usable key falls back to the root.
    expect(contextLengthFromHfConfig({ max_position_embeddings: 8192, text_config: {} })).toBe(8192);
  });

  it("ignores non-integer values and non-objects", () => {
    expect(contextLengthFromHfConfig({ max_position_embeddings: "4096", seq_length: 2.5 })).toBeNull();
    expect(contextLengthFromHfConfig([1, 2])).toBeNull();
    expect(contextLengthFromHfConfig(null)).toBeNull();
  });
});

describe("hfHubCacheDir", () => {
  it("follows huggingface_hub's precedence", () => {
    expect(hfHubCacheDir({ HF_HUB_CACHE: "/c", HF_HOME: "/h" }, "/home/u")).toBe("/c");
    expect(hfHubCacheDir({ HF_HOME: "/h" }, "/home/u")).toBe(join("/h", "hub"));
    expect(hfHubCacheDir({ XDG_CACHE_HOME: "/x" }, "/home/u")).toBe(join("/x", "huggingface", "hub"));
    expect(hfHubCacheDir({}, "/home/u")).toBe(join("/home/u", ".cache", "huggingface", "hub"));
  });
});

describe("lookupMaxContextLength", () => {
  it("reads a local model directory's config.json", () => {
    const dir = writeFiles({ "models/tiny/config.json": JSON.stringify({ max_position_embeddings: 2048 }) });
    const found = lookupMaxContextLength(join(dir, "models/tiny"), {
      env: {},
      homeDir: tempDir(),
      baseDirs: [],
    });
    expect(found).toEqual({ value: 2048, from: `local:${join(dir, "models/tiny")}` });
    // Relative paths are tried against the base directories.
    const rel = lookupMaxContextLength("models/tiny", {
      env: {},
      homeDir: tempDir(),
      baseDirs: [tempDir(), dir],
    });
    expect(rel?.value).toBe(2048);
  });

  it("reads the HF cache snapshot named by refs/main", () => {
    const hfHome = writeFiles({
      "hub/models--acme--m-7b/refs/main": "bbb\n",
      "hub/models--acme--m-7b/snapshots/aaa/config.json": JSON.stringify({ max_position_embeddings: 1111 }),
      "hub/models--acme--m-7b/snapshots/bbb/config.json": JSON.stringify({
        text_config: { max_position_embeddings: 2222 },
      }),
    });
    const found = lookupMaxContextLength("acme/m-7b", {
      env: { HF_HOME: hfHome },
      homeDir: tempDir(),
      baseDirs: [],
    });
    expect(found?.value).toBe(2222);
  });

  it("the cache wins over the built-in table", () => {
    const hfHome = writeFiles({
      "hub/models--Qwen--Qwen3-8B/snapshots/x/config.json": JSON.stringify({
        max_position_embeddings: 32768,
      }),
    });
    const found = lookupMaxContextLength("Qwen/Qwen3-8B", {
      env: { HF_HOME: hfHome },
      homeDir: tempDir(),
      baseDirs: [],
    });
    expect(found?.value).toBe(32768);
  });

  it("falls back to the built-in catalog, case-insensitively", () => {
    const opts = { env: { HF_HOME: tempDir() }, homeDir: tempDir(), baseDirs: [] };
    expect(lookupMaxContextLength("nvidia/Llama-3.1-8B-Instruct-FP8", opts)).toEqual({
      value: 131072,
      from: "built-in catalog",
    });
    expect(lookupMaxContextLength("qwen/qwen3-32b-fp8", opts)?.value).toBe(40960);
    expect(lookupMaxContextLength("acme/nothing", opts)).toBeUndefined();
  });

  it("has the catalog's context lengths", () => {
    const opts = { env: { HF_HOME: tempDir() }, homeDir: tempDir(), baseDirs: [] };
    const len = (id: string) => lookupMaxContextLength(id, opts)?.value;
    expect(len("meta-llama/Llama-3.3-70B-Instruct")).toBe(131072);
    expect(len("Qwen/Qwen3-30B-A3B")).toBe(40960);
    expect(len("Qwen/Qwen3-235B-A22B-FP8")).toBe(40960);
    expect(len("mistralai/Mixtral-8x22B-Instruct-v0.1")).toBe(65536);
  });
});

describe("loadConfig with context_length: max", () => {
  it("uses a local model directory named relative to the config file", () => {
    const spec = loadYaml(engineFor("./my-model"), {
      files: { "my-model/config.json": JSON.stringify({ model_max_length: 5000 }) },
    });
    expect(aggregatedRole(spec).maxModelLen).toBe(5000);
  });

  it("uses the HF cache from the given environment", () => {
    const hfHome = writeFiles({
      "hub/models--acme--m/snapshots/r1/config.json": JSON.stringify({ seq_length: 7777 }),
    });
    const spec = loadYaml(engineFor("acme/m"), { env: { HF_HOME: hfHome } });
    expect(aggregatedRole(spec).maxModelLen).toBe(7777);
  });
});
