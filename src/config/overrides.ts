/**
 * `--set PATH=YAML_VALUE` (`ai-dynamo/aisimulate@3942c28:python/aisimulate/src/aisimulate/main.py`): split at the first `=`, the path on `.`, the
 * value parsed as YAML; applied left to right on the raw data before validation, so the full
 * schema and cross-field rules see the final document.
 */
import { parseDocument } from "yaml";
import { type ConfigIssue, clipText } from "./errors.js";
import { getOwn, isMapping, type Mapping, setOwn } from "./mapping.js";
import { describeValue } from "./schema/primitives.js";
import { MAX_VALUE_DEPTH, nestingDepth } from "./yamlLimits.js";

export interface Override {
  /** The flag as the user wrote it, e.g. `--set traffic.load.type=poisson`. */
  readonly flag: string;
  readonly path: readonly string[];
  readonly value: unknown;
}

export type OverrideResult =
  | { readonly ok: true; readonly override: Override }
  | { readonly ok: false; readonly issue: ConfigIssue };

export function parseOverride(spec: string): OverrideResult {
  const flag = `--set ${spec}`;
  const eq = spec.indexOf("=");
  if (eq < 0) {
    return { ok: false, issue: { path: spec, message: "expected PATH=VALUE", source: flag } };
  }
  const rawPath = spec.slice(0, eq);
  const path = rawPath.split(".");
  for (const segment of path) {
    if (segment === "") {
      return {
        ok: false,
        issue: {
          path: rawPath,
          message:
            "empty path segment; the path must be dotted mapping keys (sequence indexes are unsupported)",
          source: flag,
        },
      };
    }
    if (/^\d+$/.test(segment)) {
      return {
        ok: false,
        issue: { path: rawPath, message: `sequence indexes are unsupported ('${segment}')`, source: flag },
      };
    }
  }
  const text = spec.slice(eq + 1);
  if (nestingDepth(text) > MAX_VALUE_DEPTH) {
    return {
      ok: false,
      issue: {
        path: rawPath,
        message: `the value nests deeper than ${MAX_VALUE_DEPTH} levels`,
        source: flag,
      },
    };
  }
  // The reference parses the value with `yaml.safe_load`: `2` is a number, `{type: x}` a mapping.
  const doc = parseDocument(text);
  if (doc.errors.length > 0) {
    const reason = doc.errors[0].message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "");
    return { ok: false, issue: { path: rawPath, message: `invalid YAML value: ${reason}`, source: flag } };
  }
  let value: unknown;
  try {
    // As in a config file: a bounded number of aliases (an alias bomb is refused), and an
    // alias without its anchor is a user error, not a crash.
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    const reason = clipText((err as Error).message.split("\n")[0]);
    return { ok: false, issue: { path: rawPath, message: `invalid YAML value: ${reason}`, source: flag } };
  }
  return { ok: true, override: { flag, path, value } };
}

/**
 * Apply `override` to `root` in place. Missing (or null) intermediate mappings are created;
 * descending through any other value is an error, since silently replacing it would hide a typo.
 */
export function applyOverride(root: Mapping, override: Override): ConfigIssue | undefined {
  let current = root;
  const { path } = override;
  for (let i = 0; i < path.length - 1; i++) {
    const next = getOwn(current, path[i]);
    if (next === undefined || next === null) {
      const created: Mapping = {};
      setOwn(current, path[i], created);
      current = created;
    } else if (isMapping(next)) {
      current = next;
    } else {
      const crossed = path.slice(0, i + 1).join(".");
      return {
        path: path.join("."),
        message: `cannot set ${path.join(".")}: ${crossed} is ${describeValue(next)}, not a mapping`,
        source: override.flag,
      };
    }
  }
  setOwn(current, path[path.length - 1], override.value);
  return undefined;
}
