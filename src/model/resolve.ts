/**
 * `engine.model` → ModelArchitecture, offline. Order (first hit wins):
 * 1. a local directory holding `config.json` (+ `hf_quant_config.json`), as the reference treats
 *    any existing directory path as a checkpoint;
 * 2. the local Hugging Face hub cache: `models--ORG--NAME/snapshots/<rev>/config.json`, preferring
 *    the revision `refs/main` names;
 * 3. the built-in catalog (case-insensitive);
 * 4. a ModelError listing the ids the catalog knows.
 * Never a network call: fleetsim must run on air-gapped hosts.
 */
import { readdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { isDirectory, isFile } from "../util/fsRead.js";
import type { ModelArchitecture } from "./architecture.js";
import { catalogIds, lookupCatalog } from "./catalog.js";
import { ModelError } from "./errors.js";
import { architectureFromHfConfig } from "./hfConfig.js";

export interface ResolveModelOptions {
  /** Environment for `HF_HUB_CACHE` / `HF_HOME` / `XDG_CACHE_HOME`; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Directory a relative local path is resolved against when `baseDirs` is not given; default cwd. */
  readonly cwd?: string;
  /** Directories a relative local model path is tried against, in order; default `[cwd]`. */
  readonly baseDirs?: readonly string[];
  /** Home directory for the default cache location; default `os.homedir()`. */
  readonly homeDir?: string;
}

/** A checkpoint directory holding `config.json`, and how it was found. */
export interface LocatedModelConfig {
  readonly dir: string;
  /** `local:<dir>` or `hf-cache:<config path>`. */
  readonly source: string;
}

/** Steps 1–2 of the resolution order: a local directory, else the Hugging Face cache. */
export function locateModelConfig(
  id: string,
  opts: ResolveModelOptions = {},
): LocatedModelConfig | undefined {
  const env = opts.env ?? process.env;
  const baseDirs = opts.baseDirs ?? [opts.cwd ?? process.cwd()];
  const homeDir = opts.homeDir ?? homedir();
  const localDir = localModelDir(id, baseDirs);
  if (localDir !== undefined) return { dir: localDir, source: `local:${localDir}` };
  const snapshot = hfCacheSnapshot(id, hfHubCacheDir(env, homeDir));
  if (snapshot !== undefined) return { dir: snapshot, source: `hf-cache:${join(snapshot, "config.json")}` };
  return undefined;
}

/** Reads a located checkpoint's `config.json` (an unreadable or invalid one is a ModelError). */
export function readModelConfig(id: string, located: LocatedModelConfig): unknown {
  return readJson(join(located.dir, "config.json"), id);
}

export function resolveModel(id: string, opts: ResolveModelOptions = {}): ModelArchitecture {
  const located = locateModelConfig(id, opts);
  if (located !== undefined) return fromDirectory(id, located.dir, located.source);

  const known = lookupCatalog(id);
  if (known !== undefined) return known;

  const cacheDir = hfHubCacheDir(opts.env ?? process.env, opts.homeDir ?? homedir());
  throw new ModelError(
    `unknown model '${id}': not a local directory with config.json, not in the Hugging Face cache ` +
      `(${cacheDir}), and not in fleetsim's built-in catalog (fleetsim never downloads). ` +
      `Known ids: ${catalogIds().join(", ")}`,
  );
}

/** The model's maximum context length (`ai-dynamo/aisimulate@acb5b46:python/aisimulate/src/aisimulate/aic.py`), or null when its config names none. */
export function maxContextLength(model: ModelArchitecture): number | null {
  return model.maxContextLength;
}

/** The hub cache directory as `huggingface_hub` picks it. */
export function hfHubCacheDir(env: Readonly<Record<string, string | undefined>>, homeDir: string): string {
  if (env["HF_HUB_CACHE"]) return env["HF_HUB_CACHE"];
  if (env["HF_HOME"]) return join(env["HF_HOME"], "hub");
  const cacheRoot = env["XDG_CACHE_HOME"] ? env["XDG_CACHE_HOME"] : join(homeDir, ".cache");
  return join(cacheRoot, "huggingface", "hub");
}

function localModelDir(id: string, baseDirs: readonly string[]): string | undefined {
  const candidates = isAbsolute(id) ? [id] : baseDirs.map((base) => resolve(base, id));
  return candidates.find((dir) => isFile(join(dir, "config.json")));
}

/**
 * `<cache>/models--ORG--NAME/snapshots/<rev>` holding a config.json, preferring the revision
 * `refs/main` names. The repo folder is matched exactly first, then case-insensitively (Hub ids
 * are case-insensitive, the cache folder keeps the spelling of the first download).
 */
function hfCacheSnapshot(id: string, cacheDir: string): string | undefined {
  if (isAbsolute(id) || id.startsWith(".") || !id.includes("/")) return undefined;
  const folder = `models--${id.split("/").join("--")}`;
  let repoDir = join(cacheDir, folder);
  if (!isDirectory(repoDir)) {
    const match = listDir(cacheDir).find((name) => name.toLowerCase() === folder.toLowerCase());
    if (match === undefined) return undefined;
    repoDir = join(cacheDir, match);
  }
  const snapshots = join(repoDir, "snapshots");
  const revisions = listDir(snapshots).sort();
  const main = readText(join(repoDir, "refs", "main"))?.trim();
  if (main !== undefined && revisions.includes(main)) {
    revisions.splice(revisions.indexOf(main), 1);
    revisions.unshift(main);
  }
  return revisions.map((rev) => join(snapshots, rev)).find((dir) => isFile(join(dir, "config.json")));
}

function fromDirectory(id: string, dir: string, source: string): ModelArchitecture {
  const config = readJson(join(dir, "config.json"), id);
  const quantPath = join(dir, "hf_quant_config.json");
  const quant = isFile(quantPath) ? readJson(quantPath, id) : null;
  return architectureFromHfConfig(id, config, quant, source);
}

/** A config that exists but cannot be parsed is an error: silently skipping it would hide it. */
function readJson(path: string, id: string): unknown {
  const text = readText(path);
  if (text === undefined) throw new ModelError(`${id}: cannot read ${path}`);
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new ModelError(`${id}: ${path} is not valid JSON (${(err as Error).message})`);
  }
}

function listDir(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}
