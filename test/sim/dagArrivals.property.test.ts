/**
 * Replays of random dependency graphs (`agentic_mooncake`) and random delta sessions
 * (`mooncake-delta`) on random small deployments, with the invariant checks on: every request
 * ends once, a node arrives exactly `(delay + tool_wait_ms) / speedup` after the last of its
 * dependencies ended (never before any of them), and a delta session's turn arrives its delay
 * after the previous turn ended (one request in flight per session).
 */
import { fc, test } from "@fast-check/vitest";
import { describe, expect } from "vitest";
import type { RunSpec } from "../../src/config/runSpec.js";
import { Terminal } from "../../src/metrics/collector.js";
import { loadWorkload } from "../../src/pipeline/index.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import { Replay } from "../../src/sim/replay.js";
import { requestIdAt } from "../../src/traffic/requests.js";
import { traceSpec, writeTrace } from "../helpers/specs.js";

const deployment = fc.record({
  replicas: fc.integer({ min: 1, max: 3 }),
  numGpuBlocks: fc.integer({ min: 6, max: 60 }),
  maxBatchedTokens: fc.integer({ min: 4, max: 32 }),
  maxSequences: fc.integer({ min: 1, max: 6 }),
  polynomial: fc.boolean(),
  speedup: fc.constantFrom(1, 0.5, 3),
});

type Deployment = typeof deployment extends fc.Arbitrary<infer T> ? T : never;

const node = fc.record({
  // Indices into the earlier nodes (mod their count): the graph is acyclic by construction.
  deps: fc.array(fc.nat(), { maxLength: 3 }),
  timestamp: fc.integer({ min: 0, max: 200 }),
  delay: fc.integer({ min: 0, max: 30 }),
  toolWait: fc.integer({ min: 0, max: 30 }),
  ids: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 8 }),
  output: fc.integer({ min: 0, max: 6 }),
});

function spec(path: string, format: "agentic_mooncake" | "mooncake-delta", d: Deployment): RunSpec {
  const base = traceSpec(path, {
    role: {
      replicas: d.replicas,
      blockSize: 2,
      numGpuBlocks: d.numGpuBlocks,
      maxBatchedTokens: d.maxBatchedTokens,
      maxSequences: d.maxSequences,
      timing: d.polynomial ? { type: "polynomial" } : { type: "fixed", prefillMs: 3, decodeMs: 1 },
    },
    load: { type: "trace_timestamps", speedup: d.speedup },
  });
  if (base.source.type !== "trace" || base.source.format === "dynamo" || base.source.format === "weka")
    throw new Error("a one-file trace spec");
  return { ...base, source: { ...base.source, format } };
}

async function replay(s: RunSpec) {
  const table = await loadWorkload(s);
  const r = new Replay(s, table, await createRoleTimings(s.engine), {
    capturePerRequest: false,
    checkInvariants: true,
  });
  const result = r.runSync();
  return { table, col: result.requests.columns() };
}

describe("dependency-graph and delta-session replays", () => {
  test.prop([fc.array(node, { minLength: 1, maxLength: 30 }), fc.array(fc.nat()), deployment], {
    seed: 20260120,
    numRuns: 80,
  })(
    "a node arrives (delay + tool_wait) / speedup after its last dependency ended",
    async (nodes, order, d) => {
      const rows = nodes.map((n, i) => {
        const deps = i === 0 ? [] : [...new Set(n.deps.map((k) => k % i))].map((k) => `n${k}`);
        return {
          request_id: `n${i}`,
          ...(deps.length === 0
            ? { timestamp: n.timestamp }
            : { wait_for: deps, delay: n.delay, tool_wait_ms: n.toolWait }),
          input_length: n.ids.length * 4,
          output_length: n.output,
          hash_ids: n.ids,
        };
      });
      // File order is any permutation: a row may wait for one written after it.
      const file = [...rows];
      for (let i = file.length - 1; i > 0; i--) {
        const j = (order[i] ?? 0) % (i + 1);
        [file[i], file[j]] = [file[j], file[i]];
      }
      const { table, col } = await replay(spec(writeTrace(file), "agentic_mooncake", d));
      const rowOf = new Map(
        Array.from({ length: table.count }, (_, r) => [requestIdAt(table.requestIds, r), r]),
      );
      const minTs = Math.min(...file.flatMap((r) => ("timestamp" in r ? [r.timestamp] : [])));
      for (const f of file) {
        const r = rowOf.get(f.request_id)!;
        const status = col.status[r];
        expect(status === Terminal.Completed || status === Terminal.Rejected).toBe(true);
        if (!("wait_for" in f)) {
          expect(col.arrival[r]).toBe((f.timestamp - minTs) / d.speedup);
          continue;
        }
        const ends = f.wait_for!.map((id) => col.terminal[rowOf.get(id)!]);
        for (const end of ends) expect(col.arrival[r]).toBeGreaterThanOrEqual(end);
        expect(col.arrival[r]).toBe(Math.max(...ends) + (f.delay! + f.tool_wait_ms!) / d.speedup);
        if (status === Terminal.Completed) expect(col.firstAdmit[r]).toBeGreaterThanOrEqual(col.arrival[r]);
      }
    },
  );

  const turn = fc.record({
    session: fc.integer({ min: 0, max: 3 }),
    ids: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 0, maxLength: 4 }),
    cut: fc.integer({ min: 0, max: 3 }),
    output: fc.integer({ min: 0, max: 6 }),
    delay: fc.integer({ min: 0, max: 40 }),
  });

  test.prop([fc.array(turn, { minLength: 1, maxLength: 24 }), deployment], { seed: 20260121, numRuns: 80 })(
    "a delta turn arrives its delay after the previous turn ended; prompts accumulate",
    async (turns, d) => {
      const seen = new Set<number>();
      const rows = turns.map((t) => {
        const first = !seen.has(t.session);
        seen.add(t.session);
        const ids = first && t.ids.length === 0 ? [0] : t.ids;
        return {
          session_id: `s${t.session}`,
          ...(first ? { timestamp: t.delay * 3 } : { delay: t.delay }),
          input_length: Math.max(0, ids.length * 4 - t.cut),
          output_length: t.output,
          hash_ids: ids,
        };
      });
      const { table, col } = await replay(spec(writeTrace(rows), "mooncake-delta", d));
      for (let r = 0; r < table.count; r++) {
        const next = table.nextTurnRow[r];
        if (next < 0) continue;
        expect(table.inputLength[next]).toBe(
          table.inputLength[r] + rows[r].output_length + rows[next].input_length,
        );
        expect(col.arrival[next]).toBe(
          col.terminal[r] + ("delay" in rows[next] ? rows[next].delay : 0) / d.speedup,
        );
      }
    },
  );
});
