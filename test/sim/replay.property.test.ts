import { fc, test } from "@fast-check/vitest";
import { describe, expect } from "vitest";
import { Terminal } from "../../src/metrics/collector.js";
import { buildSummary } from "../../src/metrics/summary.js";
import { loadWorkload } from "../../src/pipeline/index.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import { Replay } from "../../src/sim/replay.js";
import { traceSpec, writeTrace } from "../helpers/specs.js";

const row = fc.record({
  gap: fc.integer({ min: 0, max: 50 }),
  input: fc.integer({ min: 1, max: 40 }),
  output: fc.integer({ min: 0, max: 8 }),
  // Ids from a small alphabet so prompts share prefixes.
  ids: fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 10 }),
});

const setup = fc.record({
  rows: fc.array(row, { minLength: 1, maxLength: 25 }),
  replicas: fc.integer({ min: 1, max: 3 }),
  blockSize: fc.constantFrom(2, 4),
  numGpuBlocks: fc.integer({ min: 3, max: 40 }),
  maxBatchedTokens: fc.integer({ min: 1, max: 32 }),
  maxSequences: fc.integer({ min: 1, max: 6 }),
  prefixCaching: fc.boolean(),
  polynomial: fc.boolean(),
});

describe("replay invariants over random small traces", () => {
  test.prop([setup], { seed: 20261129, numRuns: 150 })(
    "every request terminates once, completed ones get every token, KV is all free, time is monotone",
    async (c) => {
      let t = 0;
      const rows = c.rows.map((r) => {
        t += r.gap;
        return {
          timestamp: t,
          input_length: Math.min(r.input, r.ids.length * 4),
          output_length: r.output,
          hash_ids: r.ids,
        };
      });
      const spec = traceSpec(writeTrace(rows), {
        role: {
          replicas: c.replicas,
          blockSize: c.blockSize,
          numGpuBlocks: c.numGpuBlocks,
          maxBatchedTokens: c.maxBatchedTokens,
          maxSequences: c.maxSequences,
          prefixCaching: c.prefixCaching,
          timing: c.polynomial ? { type: "polynomial" } : { type: "fixed", prefillMs: 3, decodeMs: 1 },
        },
      });
      const table = await loadWorkload(spec);
      const replay = new Replay(spec, table, await createRoleTimings(spec.engine), {
        capturePerRequest: false,
      });
      const result = replay.runSync();
      expect(result.collector.arrived).toBe(rows.length);
      const col = result.requests.columns();
      for (let r = 0; r < rows.length; r++) {
        const status = col.status[r];
        expect(status === Terminal.Completed || status === Terminal.Rejected).toBe(true);
        if (status === Terminal.Completed) {
          expect(col.tokens[r]).toBe(rows[r].output_length);
          if (col.tokens[r] > 0) {
            expect(col.firstToken[r]).toBeGreaterThanOrEqual(col.arrival[r]);
            expect(col.lastToken[r]).toBeGreaterThanOrEqual(col.firstToken[r]);
          }
          expect(col.terminal[r]).toBeGreaterThanOrEqual(col.arrival[r]);
        } else {
          // Only requests whose prompt, or whose context before the last token, is larger than
          // the whole cache are rejected here (no max_model_len).
          const context = table.inputLength[r] + Math.max(0, rows[r].output_length - 1);
          expect(Math.ceil(context / c.blockSize)).toBeGreaterThan(c.numGpuBlocks);
        }
      }
      for (const w of replay.workers) {
        expect(w.hasWork()).toBe(false);
        expect(w.pool.activeBlocks).toBe(0);
        expect(w.pool.availableBlocks).toBe(c.numGpuBlocks);
      }
      const s = buildSummary(result, null);
      // Token gaps come only from completed requests.
      let gaps = 0;
      for (let r = 0; r < rows.length; r++)
        if (col.status[r] === Terminal.Completed) gaps += Math.max(0, col.tokens[r] - 1);
      expect(result.collector.itl.count).toBe(gaps);
      expect(s.duration_ms).toBeLessThanOrEqual(result.endTimeMs);
      expect(s.num_ttft_samples).toBeLessThanOrEqual(s.completed_requests);
    },
  );
});
