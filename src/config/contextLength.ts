/**
 * `context_length: max` → the model's maximum context length (`ai-dynamo/aisimulate@acb5b46:python/aisimulate/src/aisimulate/aic.py`), found offline
 * in the same places as the model itself (src/model/resolve.ts): a local model directory's
 * config.json, else the local Hugging Face cache, else the built-in catalog. Only the context
 * keys are read, so any architecture works here. Never a network call.
 */
import { lookupCatalog } from "../model/catalog.js";
import { ModelError } from "../model/errors.js";
import { contextLengthFromConfig } from "../model/hfConfig.js";
import { locateModelConfig, readModelConfig } from "../model/resolve.js";

export interface ContextLengthLookup {
  /** Environment for `HF_HUB_CACHE` / `HF_HOME` / `XDG_CACHE_HOME` / `HOME`. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Directories a relative local model path is tried against, in order. */
  readonly baseDirs: readonly string[];
  readonly homeDir: string;
}

export interface ContextLengthFound {
  readonly value: number;
  /** Where it came from, for messages and debugging: a config source or `built-in catalog`. */
  readonly from: string;
}

export function lookupMaxContextLength(
  model: string,
  opts: ContextLengthLookup,
): ContextLengthFound | undefined {
  try {
    const located = locateModelConfig(model, opts);
    if (located !== undefined) {
      const value = contextLengthFromConfig(readModelConfig(model, located));
      return value === null ? undefined : { value, from: located.source };
    }
    const value = lookupCatalog(model)?.maxContextLength ?? null;
    return value === null ? undefined : { value, from: "built-in catalog" };
  } catch (err) {
    // An unreadable config or a catalog model fleetsim cannot price: no context length from here.
    if (err instanceof ModelError) return undefined;
    throw err;
  }
}
