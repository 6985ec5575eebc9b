/**
 * No function of `src/engine/` or `src/sim/` is longer than 80 lines (docs/architecture.md,
 * "Code shape"): the event loop and the engines are where a newcomer reads first, so each step
 * stays a unit one can hold in view. Functions are found with a TypeScript parser (oxc); a function's
 * length is its lines from the first to the last, comments inside it included.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { parseSync } from "oxc-parser";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const MAX_LINES = 80;
const FOLDERS = ["src/engine", "src/sim"];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

interface FunctionSpan {
  readonly where: string;
  readonly lines: number;
}

const FUNCTION_TYPES = new Set(["FunctionDeclaration", "FunctionExpression", "ArrowFunctionExpression"]);

interface AstNode {
  readonly type: string;
  readonly start: number;
  readonly end: number;
  readonly [key: string]: unknown;
}

function isNode(value: unknown): value is AstNode {
  return (
    typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string"
  );
}

/** The name a function is known by: its own, or the method, property or variable it is the value of. */
function nameOf(node: AstNode, parent: AstNode | undefined): string {
  const named = (value: unknown): string | undefined =>
    isNode(value) && typeof value.name === "string" ? value.name : undefined;
  return named(node.id) ?? named(parent?.key) ?? named(parent?.id) ?? "(anonymous)";
}

/** Every function of one file with its line count. */
function functionSpans(path: string, text: string): FunctionSpan[] {
  const { program, errors } = parseSync(path, text);
  if (errors.length > 0) throw new Error(`${path}: ${errors[0].message}`);
  const lineStarts = [0];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) lineStarts.push(i + 1);
  const lineOf = (offset: number): number => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const spans: FunctionSpan[] = [];
  const visit = (node: AstNode, parent: AstNode | undefined): void => {
    if (FUNCTION_TYPES.has(node.type) && node.body !== null) {
      const first = lineOf(node.start);
      const last = lineOf(node.end - 1);
      spans.push({
        where: `${relative(ROOT, path) || path}:${first + 1} ${nameOf(node, parent)}`,
        lines: last - first + 1,
      });
    }
    for (const value of Object.values(node)) {
      if (Array.isArray(value)) {
        for (const item of value) if (isNode(item)) visit(item, node);
      } else if (isNode(value)) visit(value, node);
    }
  };
  visit(program as unknown as AstNode, undefined);
  return spans;
}

describe("function length", () => {
  it("measures a function from its first line to its last", () => {
    const spans = functionSpans("x.ts", "function a() {\n  return 1;\n}\nclass B {\n  m(): void {}\n}\n");
    expect(spans).toEqual([
      { where: "x.ts:1 a", lines: 3 },
      { where: "x.ts:5 m", lines: 1 },
    ]);
  });

  it(`no function in ${FOLDERS.join(" or ")} exceeds ${MAX_LINES} lines`, () => {
    const long = FOLDERS.flatMap((folder) => sourceFiles(join(ROOT, folder)))
      .flatMap((path) => functionSpans(path, readFileSync(path, "utf8")))
      .filter((span) => span.lines > MAX_LINES)
      .map((span) => `${span.where} (${span.lines} lines)`);
    expect(long).toEqual([]);
  });
});
