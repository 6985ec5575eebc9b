/**
 * The trace formats' config rules (config/traceFormats.ts; the AISimulate user guide §11.6):
 * which loads each format takes, whether `max_virtual_time_seconds` applies, and the aggregated-
 * only / Planner-disabled formats, each a config error at its own path and line (exit 2 from the
 * CLI). `weka` follows agentic_mooncake's rules (test/traffic/weka.test.ts runs it).
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../helpers/cli.js";
import {
  issueAt,
  loadError,
  loadYaml,
  RUNNABLE_ENGINE,
  RUNNABLE_PD_ENGINE,
  writeFiles,
} from "../helpers/configHelpers.js";

const FILES = { "trace.jsonl": `${JSON.stringify({ timestamp: 0, output_length: 1, hash_ids: [1] })}\n` };

function yaml(format: string, load: string, extra = "", engine = RUNNABLE_ENGINE): string {
  return `traffic:\n  source: {type: trace, format: ${format}, paths: [trace.jsonl]}\n  load: ${load}\n${extra}${engine}`;
}

const TS = "{type: trace_timestamps, speedup: 2}";
const CC = "{type: concurrency, concurrency: 4}";
const CAP = "  stop: {max_virtual_time_seconds: 60}\n";
const PLANNER = "planner: {policy: enabled, target: load}\n";

describe("config: trace formats", () => {
  const accepted: [string, string, string][] = [
    ["mooncake-delta", TS, CAP],
    ["mooncake-delta", CC, CAP],
    ["agentic_mooncake", TS, ""],
    ["applied_compute_agentic", CC, CAP],
  ];
  for (const [format, load, extra] of accepted) {
    it(`${format} with ${load}${extra === "" ? "" : " and a virtual-time cap"} resolves to a one-file source`, () => {
      const spec = loadYaml(yaml(format, load, extra), { files: FILES });
      expect(spec.source).toMatchObject({ type: "trace", format, blockSize: 512 });
      expect(spec.source.type === "trace" && spec.source.path.endsWith("trace.jsonl")).toBe(true);
    });
  }

  it("block_size is the trace hash-block size, as for Mooncake", () => {
    const spec = loadYaml(
      `traffic:\n  source: {type: trace, format: applied_compute_agentic, paths: [trace.jsonl], block_size: 64}\n  load: ${CC}\n${RUNNABLE_ENGINE}`,
      { files: FILES },
    );
    expect(spec.source.type === "trace" && spec.source.blockSize).toBe(64);
  });

  const refused: [string, string, string, string, string, RegExp][] = [
    [
      "agentic_mooncake",
      CC,
      "",
      RUNNABLE_ENGINE,
      "traffic.load.type",
      /^traffic\.load\.type='concurrency' is not supported with traffic\.source\.format='agentic_mooncake' \(its rows are the nodes of a dependency graph\); use 'trace_timestamps'/,
    ],
    [
      "agentic_mooncake",
      TS,
      CAP,
      RUNNABLE_ENGINE,
      "traffic.stop.max_virtual_time_seconds",
      /^traffic\.stop\.max_virtual_time_seconds is not supported with traffic\.source\.format='agentic_mooncake' .*; remove it/,
    ],
    [
      "applied_compute_agentic",
      TS,
      "",
      RUNNABLE_ENGINE,
      "traffic.load.type",
      /^traffic\.load\.type='trace_timestamps' is not supported with traffic\.source\.format='applied_compute_agentic' \(its sessions have no timestamps\); use 'concurrency'/,
    ],
    [
      "mooncake-delta",
      TS,
      "",
      RUNNABLE_PD_ENGINE,
      "engine.mode",
      /^engine\.mode='disaggregated' is not supported with traffic\.source\.format='mooncake-delta' .*aggregated deployment only/,
    ],
    [
      "agentic_mooncake",
      TS,
      "",
      RUNNABLE_PD_ENGINE,
      "engine.mode",
      /^engine\.mode='disaggregated' is not supported with traffic\.source\.format='agentic_mooncake'/,
    ],
    [
      "mooncake-delta",
      CC,
      "",
      `${RUNNABLE_ENGINE}${PLANNER}`,
      "planner.policy",
      /^planner\.policy='enabled' is not supported with traffic\.source\.format='mooncake-delta' .*requires planner\.policy='disabled'/,
    ],
    [
      "agentic_mooncake",
      TS,
      "",
      `${RUNNABLE_ENGINE}${PLANNER}`,
      "planner.policy",
      /^planner\.policy='enabled' is not supported with traffic\.source\.format='agentic_mooncake'/,
    ],
    [
      "weka",
      TS,
      "",
      `${RUNNABLE_ENGINE}${PLANNER}`,
      "planner.policy",
      /^planner\.policy='enabled' is not supported with traffic\.source\.format='weka'/,
    ],
  ];
  for (const [format, load, extra, engine, path, message] of refused) {
    it(`${format}: ${path} is refused with the format's reason and its line`, () => {
      const err = loadError(yaml(format, load, extra, engine), { files: FILES });
      const issue = issueAt(err, path);
      expect(issue.message).toMatch(message);
      expect(err.format()).toMatch(/line \d+, column \d+/);
    });
  }

  it("the Planner and a disaggregated engine stay allowed for applied_compute_agentic (the reference's planner path takes it)", () => {
    const spec = loadYaml(yaml("applied_compute_agentic", CC, "", `${RUNNABLE_PD_ENGINE}${PLANNER}`), {
      files: FILES,
    });
    expect(spec.engine.mode).toBe("disaggregated");
    expect(spec.planner).not.toBeNull();
  });

  it("paths: exactly one file for every one-file format", () => {
    const err = loadError(
      `traffic:\n  source: {type: trace, format: mooncake-delta, paths: [trace.jsonl, trace.jsonl]}\n  load: ${TS}\n${RUNNABLE_ENGINE}`,
      { files: FILES },
    );
    expect(issueAt(err, "traffic.source.paths").message).toMatch(
      /exactly 1 path for format 'mooncake-delta'/,
    );
  });

  it("fleetsim validate names the format; a refused rule exits 2", async () => {
    const names = {
      "mooncake-delta": ["Mooncake delta trace", TS],
      agentic_mooncake: ["agentic Mooncake trace", TS],
      applied_compute_agentic: ["Applied Compute agentic trace", CC],
    } as const;
    for (const [format, [name, load]] of Object.entries(names)) {
      const dir = writeFiles({ ...FILES, "prediction.yaml": yaml(format, load) });
      const r = await cli("validate", "-c", join(dir, "prediction.yaml"));
      expect(r.code, r.err).toBe(0);
      expect(r.out.replace(/\s+/g, " ")).toContain(`${name} ${join(dir, "trace.jsonl")}`);
    }
    const dir = writeFiles({ ...FILES, "prediction.yaml": yaml("agentic_mooncake", CC) });
    const r = await cli("validate", "-c", join(dir, "prediction.yaml"));
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      "traffic.load.type='concurrency' is not supported with traffic.source.format='agentic_mooncake'",
    );
  });
});
