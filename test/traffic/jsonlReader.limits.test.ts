/**
 * The JSONL trace reader's limits (docs/traces.md "Limits"): a line longer than 16 MiB (a file
 * without line breaks) and binary content (a NUL byte) are errors naming the file and the line,
 * raised as soon as they are read, plain or gzip, also through `predict` (exit 2, nothing written).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { JsonlLineReader, MAX_LINE_CHARS, readJsonlLines } from "../../src/traffic/jsonlReader.js";
import { TraceError } from "../../src/traffic/traceError.js";
import { cli } from "../helpers/cli.js";
import { tempDir } from "../helpers/specs.js";

const ROW = '{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [1]}';

async function linesOf(path: string): Promise<number[]> {
  const seen: number[] = [];
  await readJsonlLines(path, (_line, lineNo) => seen.push(lineNo));
  return seen;
}

function file(name: string, content: string | Buffer): string {
  const path = join(tempDir("fleetsim-limits-"), name);
  writeFileSync(path, content);
  return path;
}

describe("the trace reader's limits", () => {
  it("a line of exactly the limit reads; one character more is an error naming the line", async () => {
    const atLimit = file("t.jsonl", `${ROW}\n${" ".repeat(MAX_LINE_CHARS)}\n${ROW}\n`);
    expect(await linesOf(atLimit)).toEqual([1, 3]);
    const over = file("t.jsonl", `${ROW}\n${ROW}\n${"x".repeat(MAX_LINE_CHARS + 1)}`);
    await expect(linesOf(over)).rejects.toThrow(
      new TraceError(
        over,
        3,
        "the line is longer than 16 MiB without a line break: not a JSONL trace (a record is one line of at most a few hundred KiB)",
      ),
    );
  });

  it("a long line that ends is refused too, also when it is blank, and the lines after it are not read", async () => {
    for (const filler of [" ", "x"]) {
      const path = file("t.jsonl", `${ROW}\n${filler.repeat(MAX_LINE_CHARS + 10)}\n${ROW}\n`);
      const seen: number[] = [];
      await expect(readJsonlLines(path, (_line, lineNo) => seen.push(lineNo))).rejects.toThrow(
        `${path}:2: the line is longer than 16 MiB`,
      );
      expect(seen).toEqual([1]);
    }
  });

  it("stops at the limit, not at the end of a larger file without line breaks", async () => {
    const path = file("t.jsonl", `${ROW}\n${"a".repeat(3 * MAX_LINE_CHARS)}`);
    const reader = await JsonlLineReader.open(path);
    let chunks = 0;
    await expect(
      (async () => {
        while (await reader.readChunk(() => {})) chunks++;
      })(),
    ).rejects.toThrow(`${path}:2: the line is longer than 16 MiB`);
    // 1 MiB reads: the error comes after about 16 of them, not 48.
    expect(chunks).toBeLessThanOrEqual(17);
  });

  it("a NUL byte is binary content, named at its line: mid-file, in the last line, gzipped", async () => {
    const mid = file("t.jsonl", `${ROW}\n${ROW}\n${ROW}\0\n${ROW}\n`);
    await expect(linesOf(mid)).rejects.toThrow(
      `${mid}:3: binary content (a NUL byte): a JSONL trace is text, one JSON record a line`,
    );
    const padded = file("t.jsonl", Buffer.concat([Buffer.from(`${ROW}\n${ROW}\n`), Buffer.alloc(3 << 20)]));
    await expect(linesOf(padded)).rejects.toThrow(`${padded}:3: binary content`);
    const tail = file("t.jsonl", `${ROW}\n\0`);
    await expect(linesOf(tail)).rejects.toThrow(`${tail}:2: binary content`);
    const gz = file("t.jsonl.gz", gzipSync(Buffer.concat([Buffer.from(`${ROW}\n`), Buffer.alloc(1000)])));
    await expect(linesOf(gz)).rejects.toThrow(`${gz}:2: binary content`);
  });

  it("predict on a zero-padded trace: exit 2 naming file and line, no output directory", async () => {
    const dir = tempDir("fleetsim-limits-");
    const example = readFileSync(join(import.meta.dirname, "../../examples/sample_trace.jsonl"));
    writeFileSync(join(dir, "sample_trace.jsonl"), Buffer.concat([example, Buffer.alloc(4 << 20)]));
    const config = readFileSync(join(import.meta.dirname, "../../examples/aggregated.yaml"), "utf8");
    writeFileSync(join(dir, "c.yaml"), config);
    const lines = example.toString("utf8").split("\n").length;
    const r = await cli(
      "predict",
      "-c",
      join(dir, "c.yaml"),
      "--stack",
      "engine",
      "--output-dir",
      join(dir, "out"),
    );
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${join(dir, "sample_trace.jsonl")}:${lines}: binary content (a NUL byte)`);
    expect(r.err).not.toContain("    at ");
    expect(existsSync(join(dir, "out"))).toBe(false);
  });
});
