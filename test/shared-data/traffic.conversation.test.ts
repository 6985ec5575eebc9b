/**
 * The whole FAST'25 conversation trace through the Mooncake reader: 12,031 rows, their engine
 * blocks, and the load speed. Needs ../shared (npm run test:shared); its first 600 s, a committed
 * fixture, in test/traffic/mooncake.test.ts.
 */
import { describe, expect, it } from "vitest";
import { fullBlockCount } from "../../src/traffic/blockHashes.js";
import { loadMooncakeTrace } from "../../src/traffic/mooncake/index.js";
import { completeTableHashes } from "../../src/traffic/requests.js";
import { CONVERSATION } from "./data.js";

describe("the FAST'25 conversation trace", () => {
  it("loads its 12,031 rows with their engine blocks in under 2 s", async () => {
    const opts = { traceBlockSize: 512, engineBlockSize: 64 };
    const c0 = performance.now();
    await loadMooncakeTrace(CONVERSATION, opts); // cold (includes JIT warm-up)
    const cold = performance.now() - c0;
    const t0 = performance.now();
    const t = await loadMooncakeTrace(CONVERSATION, opts);
    const ms = performance.now() - t0;
    console.log(
      `conversation_trace.jsonl: ${t.count} rows, ${t.blockHashes.length} engine blocks in ${ms.toFixed(1)} ms ` +
        `(${Math.round((t.count / ms) * 1000).toLocaleString("en-US")} rows/s; cold first load ${cold.toFixed(1)} ms)`,
    );
    expect(t.count).toBe(12_031);
    expect(t.sessionCount).toBe(12_031);
    expect(t.timestampMs[0]).toBe(0);
    let expectedBlocks = 0;
    for (let i = 0; i < t.count; i++) {
      expect(t.blockOffsets[i + 1] - t.blockOffsets[i]).toBe(fullBlockCount(t.inputLength[i], 64));
      expectedBlocks += fullBlockCount(t.inputLength[i], 64);
    }
    expect(t.blockHashes.length).toBe(expectedBlocks);
    // Rows 0 and 1 share hash id 0 (one 512-token block = 8 engine blocks), then diverge (the
    // blocks past a row's owner-only start are hashed on demand).
    completeTableHashes(t);
    const a = t.blockHashes.subarray(t.blockOffsets[0], t.blockOffsets[1]);
    const b = t.blockHashes.subarray(t.blockOffsets[1], t.blockOffsets[2]);
    expect(Array.from(a.subarray(0, 8))).toEqual(Array.from(b.subarray(0, 8)));
    expect(a[8]).not.toBe(b[8]);
    expect(ms).toBeLessThan(2000); // generous bound for slow CI; typically ~100 ms
  });
});
