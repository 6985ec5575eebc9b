/**
 * Reading the config file: YAML text → plain data, keeping the parsed document so that issues
 * can point at the line and column of the key or value they are about.
 */
import { readFileSync } from "node:fs";
import {
  type Document,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  type Pair,
  parseDocument,
} from "yaml";
import { ConfigError, type ConfigIssue } from "./errors.js";
import { dotted, type PathSegment } from "./issues.js";
import { MAX_VALUE_DEPTH, nestingDepth } from "./yamlLimits.js";

export interface Position {
  readonly line: number;
  readonly column: number;
}

/** What `locate` found: the deepest existing node on a path and whether it is the whole path. */
export interface Located {
  readonly position: Position;
  readonly exact: boolean;
}

export interface YamlSource {
  /** The document as plain data (mappings are plain objects). */
  readonly data: unknown;
  /** Position of the key (`at: "key"`) or value at `path`, or of its deepest existing ancestor. */
  locate(path: readonly PathSegment[], at: "key" | "value"): Located | undefined;
}

const MAX_ALIASES = 100;
/** Largest config file read (real configs are a few KB; this bounds memory and parse time). */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/** Read and parse `configPath`; any failure is a ConfigError naming the file. */
export function readYamlSource(configPath: string): YamlSource {
  let text: string;
  try {
    text = readFileSync(configPath, "utf8");
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === "ENOENT" ? "file not found" : String(err);
    throw new ConfigError(configPath, [{ path: "", message: reason }], "cannot read config file");
  }
  return parseYamlSource(configPath, text);
}

export function parseYamlSource(configPath: string, text: string): YamlSource {
  if (text.length > MAX_CONFIG_BYTES) {
    throw new ConfigError(
      configPath,
      [
        {
          path: "",
          message: `the file is ${text.length} characters; a config may have at most ${MAX_CONFIG_BYTES}`,
        },
      ],
      "config file too large",
    );
  }
  if (nestingDepth(text) > MAX_VALUE_DEPTH) {
    throw new ConfigError(
      configPath,
      [{ path: "", message: `the document nests deeper than ${MAX_VALUE_DEPTH} levels` }],
      "invalid config",
    );
  }
  const lineCounter = new LineCounter();
  // Duplicate keys are an error, as they are in the reference; the check is ours
  // (`duplicateKeyIssue`): the library's `uniqueKeys` compares every key with every other one,
  // quadratic in a mapping's size.
  // logLevel "error": the library would print a process warning for a collection used as a key;
  // that is reported as a config error below instead.
  const doc = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: false, logLevel: "error" });
  const position = (offset: number): Position => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };

  if (doc.errors.length > 0) {
    const issues: ConfigIssue[] = doc.errors.map((err) => {
      const pos = position(err.pos[0]);
      // yaml appends " at line L, column C:" and a code frame; we print the position our way.
      const message = err.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "");
      return { path: "", message, ...pos };
    });
    throw new ConfigError(configPath, issues, "invalid YAML");
  }

  const duplicate = duplicateKeyIssue(doc);
  if (duplicate !== null) {
    throw new ConfigError(
      configPath,
      [{ path: dotted(duplicate.path), message: duplicate.message, ...position(duplicate.offset) }],
      "invalid YAML",
    );
  }

  const root = doc.contents;
  if (!isMap(root)) {
    const what = root === null ? "an empty document" : isSeq(root) ? "a list" : "a scalar";
    throw new ConfigError(
      configPath,
      [
        {
          path: "",
          message: `the top level of the config must be a mapping, got ${what}`,
          ...(root?.range ? position(root.range[0]) : {}),
        },
      ],
      "invalid config",
    );
  }

  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (err) {
    throw new ConfigError(
      configPath,
      [{ path: "", message: String((err as Error).message) }],
      "invalid YAML",
    );
  }

  return {
    data,
    locate(path, at) {
      let node: Node | null = root;
      let pair: Pair<unknown, unknown> | undefined;
      let best: Position | undefined = root.range ? position(root.range[0]) : undefined;
      for (let i = 0; i < path.length; i++) {
        const step = child(doc, node, path[i]);
        if (step === undefined) return best === undefined ? undefined : { position: best, exact: false };
        pair = step.pair;
        node = step.node;
        const keyPos = rangeStart(pair?.key);
        const valuePos = isEmptyScalar(node) ? undefined : rangeStart(node);
        const last = i === path.length - 1;
        const offset = last && at === "key" ? (keyPos ?? valuePos) : (valuePos ?? keyPos);
        if (offset !== undefined) best = position(offset);
      }
      return best === undefined ? undefined : { position: best, exact: true };
    },
  };
}

interface Step {
  readonly node: Node | null;
  readonly pair?: Pair<unknown, unknown>;
}

function child(doc: Document, parent: Node | null, segment: PathSegment): Step | undefined {
  const target = isAlias(parent) ? parent.resolve(doc) : parent;
  if (isMap(target)) {
    for (const pair of target.items) {
      if (keyString(pair.key) === String(segment)) return { node: asNode(pair.value), pair };
    }
    return undefined;
  }
  if (isSeq(target) && /^\d+$/.test(String(segment))) {
    const item = target.items[Number(segment)];
    return item === undefined ? undefined : { node: asNode(item) };
  }
  return undefined;
}

/**
 * The first repeated (or non-scalar) key of any mapping in document order, with its path and
 * offset; linear in the document's size.
 */
function duplicateKeyIssue(doc: Document): { path: PathSegment[]; offset: number; message: string } | null {
  const stack: [unknown, PathSegment[]][] = [[doc.contents, []]];
  let first: { path: PathSegment[]; offset: number; message: string } | null = null;
  const note = (path: PathSegment[], offset: number, message: string): void => {
    if (first === null || offset < first.offset) first = { path, offset, message };
  };
  while (stack.length > 0) {
    const [node, prefix] = stack.pop()!;
    if (isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        const offset = rangeStart(pair.key) ?? 0;
        if (pair.key !== null && !isScalar(pair.key) && !isAlias(pair.key)) {
          note(prefix, offset, "a mapping key must be a plain value, not a list or mapping");
          continue;
        }
        const key = keyString(pair.key);
        if (seen.has(key)) note([...prefix, key], offset, "Map keys must be unique");
        else seen.add(key);
        stack.push([pair.value, [...prefix, key]]);
      }
    } else if (isSeq(node)) {
      for (let i = 0; i < node.items.length; i++) stack.push([node.items[i], [...prefix, i]]);
    }
  }
  return first;
}

function keyString(key: unknown): string {
  if (isScalar(key)) return String(key.value);
  return String(key);
}

function asNode(value: unknown): Node | null {
  return value !== null && typeof value === "object" && "range" in value ? (value as Node) : null;
}

function rangeStart(value: unknown): number | undefined {
  const node = asNode(value);
  return node?.range ? node.range[0] : undefined;
}

/** `key:` with nothing after it: point at the key rather than the end of the line. */
function isEmptyScalar(node: Node | null): boolean {
  return isScalar(node) && node.range !== undefined && node.range !== null && node.range[0] === node.range[1];
}
