import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ModelError } from "../../src/model/errors.js";
import { hfHubCacheDir, maxContextLength, resolveModel } from "../../src/model/resolve.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "fleetsim-model-"));
  dirs.push(dir);
  return dir;
}

function write(path: string, content: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
}

/** A tiny Llama whose dimensions differ from every catalog entry, to see which source won. */
const tinyLlama = (layers: number) => ({
  architectures: ["LlamaForCausalLM"],
  hidden_size: 256,
  intermediate_size: 512,
  max_position_embeddings: 2048,
  num_attention_heads: 4,
  num_hidden_layers: layers,
  num_key_value_heads: 2,
  vocab_size: 1000,
});

/** Options that keep the real environment and home cache out of the test. */
const isolated = (extra: { env?: Record<string, string>; baseDirs?: string[] } = {}) => ({
  env: extra.env ?? {},
  baseDirs: extra.baseDirs ?? [tempDir()],
  homeDir: tempDir(),
});

describe("resolveModel", () => {
  it("falls back to the catalog", () => {
    const m = resolveModel("meta-llama/Llama-3.1-8B", isolated());
    expect(m.source).toBe("catalog");
    expect(m.numLayers).toBe(32);
  });

  it("a local directory with config.json (and hf_quant_config.json) beats the catalog", () => {
    const base = tempDir();
    const dir = join(base, "meta-llama", "Llama-3.1-8B");
    write(join(dir, "config.json"), tinyLlama(3));
    write(join(dir, "hf_quant_config.json"), {
      quantization: { quant_algo: "FP8", kv_cache_quant_algo: "FP8" },
    });
    const m = resolveModel("meta-llama/Llama-3.1-8B", isolated({ baseDirs: [tempDir(), base] }));
    expect(m.source).toBe(`local:${dir}`);
    expect(m.numLayers).toBe(3);
    expect(m.weightDtype).toBe("fp8");
    expect(m.kvDtype).toBe("fp8");
    // An absolute path works without base directories.
    expect(resolveModel(dir, isolated()).numLayers).toBe(3);
  });

  it("a directory without config.json is not a local model", () => {
    const base = tempDir();
    mkdirSync(join(base, "meta-llama", "Llama-3.1-8B"), { recursive: true });
    expect(resolveModel("meta-llama/Llama-3.1-8B", isolated({ baseDirs: [base] })).source).toBe("catalog");
  });

  it("the HF cache beats the catalog, preferring the refs/main snapshot", () => {
    const cache = tempDir();
    const repo = join(cache, "models--Qwen--Qwen3-8B");
    write(join(repo, "snapshots", "aaa", "config.json"), tinyLlama(5));
    write(join(repo, "snapshots", "bbb", "config.json"), tinyLlama(7));
    write(join(repo, "refs", "main"), "bbb\n");
    const m = resolveModel("Qwen/Qwen3-8B", isolated({ env: { HF_HUB_CACHE: cache } }));
    expect(m.numLayers).toBe(7);
    expect(m.source).toBe(`hf-cache:${join(repo, "snapshots", "bbb", "config.json")}`);
  });

  it("without refs/main takes the first snapshot holding a config, and reads its hf_quant_config", () => {
    const home = tempDir();
    const repo = join(home, "hub", "models--nvidia--Tiny-FP8");
    mkdirSync(join(repo, "snapshots", "aaa"), { recursive: true });
    write(join(repo, "snapshots", "bbb", "config.json"), tinyLlama(2));
    write(join(repo, "snapshots", "bbb", "hf_quant_config.json"), { quantization: { quant_algo: "FP8" } });
    const m = resolveModel("nvidia/Tiny-FP8", isolated({ env: { HF_HOME: home } }));
    expect(m.numLayers).toBe(2);
    expect(m.weightDtype).toBe("fp8");
  });

  it("matches the cache folder case-insensitively", () => {
    const cache = tempDir();
    write(join(cache, "models--Acme--Tiny", "snapshots", "r1", "config.json"), tinyLlama(4));
    expect(resolveModel("acme/tiny", isolated({ env: { HF_HUB_CACHE: cache } })).numLayers).toBe(4);
  });

  it("uses ~/.cache/huggingface/hub by default", () => {
    const home = tempDir();
    write(
      join(home, ".cache", "huggingface", "hub", "models--a--b", "snapshots", "r", "config.json"),
      tinyLlama(6),
    );
    expect(resolveModel("a/b", { env: {}, baseDirs: [tempDir()], homeDir: home }).numLayers).toBe(6);
    expect(hfHubCacheDir({}, "/h")).toBe(join("/h", ".cache", "huggingface", "hub"));
    expect(hfHubCacheDir({ XDG_CACHE_HOME: "/x" }, "/h")).toBe(join("/x", "huggingface", "hub"));
    expect(hfHubCacheDir({ HF_HOME: "/hf", XDG_CACHE_HOME: "/x" }, "/h")).toBe(join("/hf", "hub"));
    expect(hfHubCacheDir({ HF_HUB_CACHE: "/c", HF_HOME: "/hf" }, "/h")).toBe("/c");
  });

  it("an unreadable config is an error, not a silent fallback", () => {
    const base = tempDir();
    write(join(base, "m", "config.json"), "{not json");
    expect(() => resolveModel("m", isolated({ baseDirs: [base] }))).toThrow(/is not valid JSON/);
  });

  it("an unknown id lists the known ids", () => {
    const run = () => resolveModel("acme/unknown-7B", isolated());
    expect(run).toThrow(ModelError);
    expect(run).toThrow(/unknown model 'acme\/unknown-7B'/);
    expect(run).toThrow(/Known ids: .*meta-llama\/Llama-3\.1-8B.*Qwen\/Qwen3-32B-FP8/);
  });

  it("an MLA model resolves from the catalog", () => {
    expect(resolveModel("deepseek-ai/DeepSeek-V3", isolated()).mla?.kvLoraRank).toBe(512);
  });

  it("exposes the max context length", () => {
    expect(maxContextLength(resolveModel("Qwen/Qwen3-32B", isolated()))).toBe(40960);
    const base = tempDir();
    const { max_position_embeddings: _, ...noContext } = tinyLlama(1);
    write(join(base, "m", "config.json"), noContext);
    expect(maxContextLength(resolveModel("m", isolated({ baseDirs: [base] })))).toBeNull();
  });
});
