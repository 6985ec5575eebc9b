/**
 * The YAML-shaped config an API call is translated into, with the provenance of every value:
 * which option (`plannerConfig.max_gpu_budget`, `extraEngineArgs.engine.block_size`) it came
 * from. The config then goes through `fleetsim predict`'s own validation, and an issue at a
 * config path is reported at the option that produced it, so callers see their own names.
 */
import type { ConfigIssue } from "../config/errors.js";
import { dotted, type PathSegment } from "../config/issues.js";
import { isMapping, type Mapping, setOwn } from "../config/mapping.js";

/** Where an option's value came from, when not the call itself (a plannerConfig file). */
export type OriginLocator = (optionPath: string) => string | undefined;

interface Origin {
  readonly configPath: readonly string[];
  readonly option: string;
}

export class ConfigDraft {
  readonly doc: Mapping = {};
  private readonly origins: Origin[] = [];
  private readonly locators: OriginLocator[] = [];

  /** Sets `value` at `configPath` (creating mappings), remembering that `option` produced it. */
  set(configPath: readonly string[], value: unknown, option: string): void {
    let node = this.doc;
    for (const key of configPath.slice(0, -1)) {
      const next = node[key];
      if (isMapping(next)) node = next;
      else {
        const created: Mapping = {};
        setOwn(node, key, created);
        node = created;
      }
    }
    setOwn(node, configPath[configPath.length - 1], value);
    this.origins.push({ configPath, option });
  }

  /** Adds a way to tell where option values came from (e.g. a line of a plannerConfig file). */
  addLocator(locator: OriginLocator): void {
    this.locators.push(locator);
  }

  /**
   * The option behind a config path: the deepest recorded path containing it (the value an
   * option set, or something inside it), else the first recorded value below it (an issue
   * about a mapping the translation created), else the config path itself.
   */
  optionFor(path: readonly PathSegment[]): string {
    const segments = path.map(String);
    let best: Origin | undefined;
    for (const origin of this.origins) {
      if (
        isPrefix(origin.configPath, segments) &&
        (best === undefined || origin.configPath.length > best.configPath.length)
      ) {
        best = origin;
      }
    }
    if (best !== undefined) {
      // Keys inside a value passed through whole (`plannerConfig.retune.router.temperature`).
      const rest = segments.slice(best.configPath.length);
      return [best.option, ...rest].join(".");
    }
    const below = this.origins.find((o) => isPrefix(segments, o.configPath));
    return below?.option ?? dotted(path);
  }

  /** An issue of the translated config, re-addressed to the option that produced the value. */
  placeIssue(issue: { path: readonly PathSegment[]; message: string; hint?: string }): ConfigIssue {
    const option = this.optionFor(issue.path);
    const source = this.locate(option);
    return {
      path: option,
      message: renameConfigPaths(issue.message, this),
      ...(source === undefined ? {} : { source }),
      ...(issue.hint === undefined ? {} : { hint: issue.hint }),
    };
  }

  /** A message with the config paths this draft set replaced by the options that produced them. */
  renameMessage(message: string): string {
    return renameConfigPaths(message, this);
  }

  locate(option: string): string | undefined {
    for (const locator of this.locators) {
      const found = locator(option);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  /** Config paths this draft set, longest first (for rewriting messages). */
  recordedPaths(): readonly Origin[] {
    return [...this.origins].sort((a, b) => b.configPath.length - a.configPath.length);
  }
}

function isPrefix(prefix: readonly string[], path: readonly string[]): boolean {
  return prefix.length <= path.length && prefix.every((segment, i) => segment === path[i]);
}

/**
 * Messages name config paths (`planner.max_num_gpus must be ...`); those the draft set are
 * replaced by their option names so the message and the issue path agree.
 */
function renameConfigPaths(message: string, draft: ConfigDraft): string {
  let out = message;
  for (const origin of draft.recordedPaths()) {
    const path = origin.configPath.join(".");
    out = out.replace(new RegExp(`(?<![\\w.])${escapeRegExp(path)}(?![\\w])`, "g"), origin.option);
  }
  return out;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
