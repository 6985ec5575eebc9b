/**
 * `context_length: max` → the model's maximum context length (aisimulate.md §4.4), found offline:
 * a local model directory's config.json, else the local Hugging Face cache, else the built-in
 * table. Never a network call: fleetsim must run on air-gapped hosts.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { knownContextLength } from "./knownContextLengths.js";

/** HF config keys in the reference's order of preference (`aic.py resolve_model_context_length`). */
const CONTEXT_KEYS = [
  "max_position_embeddings",
  "model_max_length",
  "max_sequence_length",
  "seq_length",
  "n_positions",
] as const;

export interface ContextLengthLookup {
  /** Environment for `HF_HUB_CACHE` / `HF_HOME` / `XDG_CACHE_HOME` / `HOME`. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Directories a relative local model path is tried against, in order. */
  readonly baseDirs: readonly string[];
  readonly homeDir: string;
}

export interface ContextLengthFound {
  readonly value: number;
  /** Where it came from, for messages and debugging: a config.json path or `built-in table`. */
  readonly from: string;
}

export function lookupMaxContextLength(
  model: string,
  opts: ContextLengthLookup,
): ContextLengthFound | undefined {
  for (const file of [...localConfigFiles(model, opts.baseDirs), ...hfCacheConfigFiles(model, opts)]) {
    const value = contextLengthFromHfConfig(readJson(file));
    if (value !== undefined) return { value, from: file };
  }
  const known = knownContextLength(model);
  return known === undefined ? undefined : { value: known, from: "built-in table" };
}

/** `text_config` first (multimodal wrappers), then the root; first usable key wins. */
export function contextLengthFromHfConfig(config: unknown): number | undefined {
  if (!isObject(config)) return undefined;
  const scopes = isObject(config["text_config"]) ? [config["text_config"], config] : [config];
  for (const scope of scopes) {
    for (const key of CONTEXT_KEYS) {
      const value = scope[key];
      if (typeof value === "number" && Number.isSafeInteger(value) && value > 0) return value;
    }
  }
  return undefined;
}

/** The hub cache directory as `huggingface_hub` picks it. */
export function hfHubCacheDir(env: Readonly<Record<string, string | undefined>>, homeDir: string): string {
  if (env["HF_HUB_CACHE"]) return env["HF_HUB_CACHE"];
  if (env["HF_HOME"]) return join(env["HF_HOME"], "hub");
  const cacheRoot = env["XDG_CACHE_HOME"] ? env["XDG_CACHE_HOME"] : join(homeDir, ".cache");
  return join(cacheRoot, "huggingface", "hub");
}

function localConfigFiles(model: string, baseDirs: readonly string[]): string[] {
  const dirs = isAbsolute(model) ? [model] : baseDirs.map((base) => resolve(base, model));
  return dirs.map((dir) => join(dir, "config.json")).filter(isFile);
}

/** `<cache>/models--ORG--NAME/snapshots/<rev>/config.json`, preferring the revision `refs/main` names. */
function hfCacheConfigFiles(model: string, opts: ContextLengthLookup): string[] {
  if (isAbsolute(model) || model.startsWith(".")) return [];
  const repoDir = join(hfHubCacheDir(opts.env, opts.homeDir), `models--${model.split("/").join("--")}`);
  const snapshots = join(repoDir, "snapshots");
  if (!isDir(snapshots)) return [];
  const revisions = readdirSync(snapshots).sort();
  const main = readText(join(repoDir, "refs", "main"))?.trim();
  if (main !== undefined && revisions.includes(main)) {
    revisions.splice(revisions.indexOf(main), 1);
    revisions.unshift(main);
  }
  return revisions.map((rev) => join(snapshots, rev, "config.json")).filter(isFile);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** A config.json that cannot be read or parsed is skipped: the next source may still answer. */
function readJson(path: string): unknown {
  const text = readText(path);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
