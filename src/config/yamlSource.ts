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
  const lineCounter = new LineCounter();
  // `uniqueKeys` (the default) makes duplicate keys an error, as they are in the reference.
  const doc = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  const position = (offset: number): Position => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };

  if (doc.errors.length > 0) {
    const issues: ConfigIssue[] = doc.errors.map((err) => {
      const pos = position(err.pos[0]);
      // yaml appends " at line L, column C:" and a code frame; we print the position our way.
      const message = err.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "");
      const path = err.code === "DUPLICATE_KEY" ? pathOfKeyAt(doc, err.pos[0]) : undefined;
      return { path: path === undefined ? "" : dotted(path), message, ...pos };
    });
    throw new ConfigError(configPath, issues, "invalid YAML");
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

/** Dotted path of the mapping key starting at `offset` (for duplicate-key errors). */
function pathOfKeyAt(doc: Document, offset: number): PathSegment[] | undefined {
  const search = (node: unknown, prefix: PathSegment[]): PathSegment[] | undefined => {
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = keyString(pair.key);
        if (rangeStart(pair.key) === offset) return [...prefix, key];
        const found = search(pair.value, [...prefix, key]);
        if (found) return found;
      }
    } else if (isSeq(node)) {
      for (const [i, item] of node.items.entries()) {
        const found = search(item, [...prefix, i]);
        if (found) return found;
      }
    }
    return undefined;
  };
  return search(doc.contents, []);
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
