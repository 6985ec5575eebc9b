/** `traffic.source.format: dynamo` through config resolution and `loadWorkload`. */
import { dirname, join, relative, sep } from "node:path";
import { describe, expect, it } from "vitest";
import type { RunSpec } from "../../src/config/runSpec.js";
import { loadWorkload } from "../../src/pipeline/index.js";
import { TraceError } from "../../src/traffic/traceError.js";
import { issueAt, loadError, loadYaml, RUNNABLE_ENGINE } from "../helpers/configHelpers.js";

const T0 = 1_700_000_000_000;

function line(id: string, at: number, session?: string): string {
  return JSON.stringify({
    schema: "dynamo.request.trace.v1",
    event_type: "request_end",
    event_time_unix_ms: at + 20,
    ...(session === undefined ? {} : { agent_context: { session_id: session } }),
    request: {
      request_id: id,
      request_received_ms: at,
      output_tokens: 2,
      replay: { trace_block_size: 64, input_length: 100, input_sequence_hashes: [1, 2] },
    },
  });
}

const FILES = {
  "shards/dynamo-request-trace.000001.jsonl": `${line("a", T0)}\n`,
  "shards/dynamo-request-trace.000002.jsonl": `${line("b", T0 + 5)}\n`,
  "agentic.jsonl": `${line("x", T0, "s")}\n${line("y", T0 + 100, "s")}\n`,
};

function traffic(source: string, load = "{type: trace_timestamps}", stop = ""): string {
  return `traffic:\n  source: ${source}\n  load: ${load}\n${stop}${RUNNABLE_ENGINE}`;
}

describe("config: format dynamo", () => {
  it("accepts several paths (directory, pattern, file), expands them and keeps the block size unset", () => {
    const spec = loadYaml(
      traffic("{type: trace, format: dynamo, paths: [shards, 'shards/*.000002.jsonl', agentic.jsonl]}"),
      { files: FILES },
    );
    const src = spec.source;
    if (src.type !== "trace" || src.format !== "dynamo") throw new Error("expected a dynamo source");
    const root = dirname(src.paths[2]);
    const names = src.paths.map((p) => relative(root, p).split(sep).join("/"));
    expect(names).toEqual([
      "shards/dynamo-request-trace.000001.jsonl",
      "shards/dynamo-request-trace.000002.jsonl",
      "agentic.jsonl",
    ]);
    expect(src.path).toBe(src.paths[0]);
    expect(src.blockSize).toBeNull();
  });

  it("keeps an explicit block size as the value the embedded one must equal", () => {
    const spec = loadYaml(traffic("{type: trace, format: dynamo, paths: [shards], block_size: 64}"), {
      files: FILES,
    });
    expect(spec.source.type === "trace" && spec.source.blockSize).toBe(64);
  });

  it("reports a path that names no file at its own index", () => {
    const err = loadError(
      traffic("{type: trace, format: dynamo, paths: [shards, 'nothing/*.jsonl', 'shards/*.gz']}"),
      {
        files: FILES,
      },
    );
    expect(err.issues).toHaveLength(2);
    expect(issueAt(err, "traffic.source.paths.1").message).toMatch(/nothing\/\*\.jsonl: directory not found/);
    expect(issueAt(err, "traffic.source.paths.2").message).toMatch(/no file matches the pattern/);
  });

  it("needs at least one path; mooncake still takes exactly one", () => {
    const empty = loadError(traffic("{type: trace, format: dynamo, paths: []}"));
    expect(issueAt(empty, "traffic.source.paths").message).toBe(
      "traffic.source.paths must list at least 1 path",
    );
    const two = loadError(traffic("{type: trace, format: mooncake, paths: [a, b]}"));
    expect(issueAt(two, "traffic.source.paths").message).toBe(
      "traffic.source.paths must list exactly 1 path for format 'mooncake' (got 2)",
    );
  });

  it("accepts only trace_timestamps and concurrency loads", () => {
    const err = loadError(
      traffic("{type: trace, format: dynamo, paths: [shards]}", "{type: poisson, requests_per_second: 1}"),
      { files: FILES },
    );
    expect(issueAt(err, "traffic.load.type").message).toMatch(/use 'trace_timestamps' or 'concurrency'/);
  });
});

describe("loadWorkload: dynamo", () => {
  const load = (source: string, loadYamlText?: string, stop?: string): Promise<unknown> =>
    loadWorkload(loadYaml(traffic(source, loadYamlText, stop), { files: FILES }) as RunSpec);

  it("reads the expanded shards into one table", async () => {
    const spec = loadYaml(traffic("{type: trace, format: dynamo, paths: [shards]}"), { files: FILES });
    const t = await loadWorkload(spec);
    expect(t.requestIds).toEqual(["a", "b"]);
    expect(Array.from(t.timestampMs)).toEqual([0, 5]);
    expect(t.engineBlockSize).toBe(64); // RUNNABLE_ENGINE's default engine block size
  });

  it("an explicit block size that differs from the embedded one fails naming both", async () => {
    const err = await load("{type: trace, format: dynamo, paths: [shards], block_size: 512}").catch((e) => e);
    expect(err).toBeInstanceOf(TraceError);
    expect((err as TraceError).message).toMatch(
      /embedded trace block size 64 does not match traffic\.source\.block_size 512/,
    );
  });

  it("an agentic trace accepts trace_timestamps and rejects concurrency and max_virtual_time", async () => {
    const spec = loadYaml(traffic("{type: trace, format: dynamo, paths: [agentic.jsonl]}"), { files: FILES });
    const t = await loadWorkload(spec);
    expect(t.sessionCount).toBe(1);
    expect(Array.from(t.delayAfterPreviousMs)).toEqual([0, 80]);

    const conc = await load(
      "{type: trace, format: dynamo, paths: [agentic.jsonl]}",
      "{type: concurrency}",
    ).catch((e) => e);
    expect(conc).toBeInstanceOf(TraceError);
    expect((conc as TraceError).message).toMatch(/does not support traffic\.load\.type='concurrency'/);
    const capped = await load(
      "{type: trace, format: dynamo, paths: [agentic.jsonl]}",
      undefined,
      "  stop: {max_virtual_time_seconds: 10}\n",
    ).catch((e) => e);
    expect((capped as TraceError).message).toMatch(
      /does not support traffic\.stop\.max_virtual_time_seconds/,
    );
  });

  it("a standard trace runs under concurrency load", async () => {
    const t = (await load("{type: trace, format: dynamo, paths: [shards]}", "{type: concurrency}")) as {
      count: number;
    };
    expect(t.count).toBe(2);
  });

  it("resolves relative paths against the config file", () => {
    const spec = loadYaml(traffic("{type: trace, format: dynamo, paths: [agentic.jsonl]}"), { files: FILES });
    expect(spec.source.type === "trace" && spec.source.path.endsWith(join("", "agentic.jsonl"))).toBe(true);
  });
});
