/**
 * Derives the small committed test fixtures under `test/fixtures/` from the project data folder
 * beside the repository (`../shared`), so that `npm test` runs in a clone with nothing beside it:
 *
 *   node --import tsx scripts/derive-test-fixtures.ts [--shared ../shared]
 *
 * - `test/fixtures/conversation_trace_600s.jsonl.gz`: the first ten minutes of the FAST'25
 *   conversation trace (`traces/mooncake-fast25/conversation_trace.jsonl`): every row with a
 *   timestamp below 600,000 ms, in file order, each re-serialized as compact JSON, gzipped.
 *   Tests that replay at most ten minutes of the seed walkthroughs use it instead of the trace.
 *
 * Tests whose point is the full data (the whole trace, perf-data, model configs) run in
 * `npm run test:shared` instead; `test/shared-data/fixtures.test.ts` re-derives these files there
 * and compares them with the committed ones.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** The project data folder: beside the repository. */
export const DEFAULT_SHARED_DIR = join(repoRoot, "..", "shared");

export interface Fixture {
  /** Path of the committed file, relative to the repository root. */
  readonly file: string;
  /** The source in the data folder, relative to it. */
  readonly source: string;
  /** The fixture's uncompressed text, derived from the source's text. */
  derive(sourceText: string): string;
}

/** Rows of a Mooncake trace with `timestamp` below `seconds`, one compact JSON object per line. */
export function tracePrefix(text: string, seconds: number): string {
  const rows: string[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const row = JSON.parse(line) as { timestamp?: unknown };
    if (typeof row.timestamp !== "number") throw new Error(`trace row without a timestamp: ${line}`);
    if (row.timestamp < seconds * 1000) rows.push(JSON.stringify(row));
  }
  return `${rows.join("\n")}\n`;
}

export const FIXTURES: readonly Fixture[] = [
  {
    file: "test/fixtures/conversation_trace_600s.jsonl.gz",
    source: "traces/mooncake-fast25/conversation_trace.jsonl",
    derive: (text) => tracePrefix(text, 600),
  },
];

/** Each fixture's committed path (absolute) and derived uncompressed text. */
export function deriveFixtures(sharedDir = DEFAULT_SHARED_DIR): { path: string; text: string }[] {
  return FIXTURES.map((f) => ({
    path: join(repoRoot, f.file),
    text: f.derive(readFileSync(join(sharedDir, f.source), "utf8")),
  }));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const { values } = parseArgs({ options: { shared: { type: "string" } } });
  const shared = resolve(values.shared ?? DEFAULT_SHARED_DIR);
  for (const { path, text } of deriveFixtures(shared)) {
    mkdirSync(dirname(path), { recursive: true });
    const bytes = path.endsWith(".gz") ? gzipSync(text, { level: 9 }) : Buffer.from(text);
    writeFileSync(path, bytes);
    const lines = text.split("\n").length - 1;
    console.log(`wrote ${relative(repoRoot, path)}: ${lines} rows, ${bytes.length} bytes`);
  }
}
