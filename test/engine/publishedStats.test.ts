/**
 * What a Planner tick sees of an engine (passSignals.ts `publishedStats`): each pass at its end,
 * an idle heartbeat after a second without one, as the Dynamo mocker's planner hook publishes them.
 */
import { describe, expect, it } from "vitest";
import { IDLE_FPM_INTERVAL_MS, PassSignals } from "../../src/engine/passSignals.js";
import { IDLE_HEARTBEAT, PassStats } from "../../src/engine/passStats.js";

/** An engine reduced to its passes: `pass(start, ms, decodes)` runs one. */
class Passes extends PassSignals {
  readonly stats = new PassStats();
  readonly runningCount = 0;
  readonly pool = { activeBlocks: 0 };
  pass(start: number, ms: number, decodes: number): void {
    this.beginPassStats(this.stats);
    this.stats.reset();
    this.stats.numDecodeRequests = decodes;
    this.endPass(start, ms, this.stats);
  }
}

describe("the metrics a Planner tick sees", () => {
  it("nothing before the first pass ends, unless the worker has been idle a second", () => {
    const e = new Passes();
    expect(e.publishedStats(500, 0)).toBeNull();
    expect(e.publishedStats(IDLE_FPM_INTERVAL_MS, 0)).toBe(IDLE_HEARTBEAT);
    // A worker ready at 5 s has published nothing at 5.5 s, a heartbeat at 6 s.
    expect(e.publishedStats(5500, 5000)).toBeNull();
    expect(e.publishedStats(6000, 5000)).toBe(IDLE_HEARTBEAT);
  });

  it("a pass is seen once it has ended; while the next runs, it is still the one seen", () => {
    const e = new Passes();
    e.pass(0, 12, 3);
    expect(e.publishedStats(10, 0)).toBeNull(); // the first pass is still running
    expect(e.publishedStats(12, 0)?.numDecodeRequests).toBe(3);
    e.pass(12, 12, 5);
    expect(e.publishedStats(20, 0)?.numDecodeRequests).toBe(3);
    expect(e.publishedStats(24, 0)?.numDecodeRequests).toBe(5);
  });

  it("an idle heartbeat once a second has passed since the last pass ended", () => {
    const e = new Passes();
    e.pass(0, 20, 4);
    expect(e.publishedStats(1019, 0)?.numDecodeRequests).toBe(4);
    expect(e.publishedStats(1020, 0)).toBe(IDLE_HEARTBEAT);
    // A pass that wakes the engine after the gap is not seen until it ends: the heartbeat is.
    e.pass(3000, 50, 2);
    expect(e.publishedStats(3010, 0)).toBe(IDLE_HEARTBEAT);
    expect(e.publishedStats(3050, 0)?.numDecodeRequests).toBe(2);
    // A pass longer than a second shows a heartbeat from a second after the previous end.
    e.pass(3050, 1500, 9);
    expect(e.publishedStats(3900, 0)?.numDecodeRequests).toBe(2);
    expect(e.publishedStats(4100, 0)).toBe(IDLE_HEARTBEAT);
    expect(e.publishedStats(4550, 0)?.numDecodeRequests).toBe(9);
  });
});
