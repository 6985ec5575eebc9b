import { describe, expect, it } from "vitest";
import { RoundRobinRouter } from "../../src/router/roundRobin.js";

describe("round-robin placement", () => {
  it("rotates in worker-id order and keeps its position when a worker leaves (10, 11, 12, 10 → drain 12 → 11)", () => {
    const rr = new RoundRobinRouter();
    for (const w of [12, 10, 11]) rr.addWorker(w);
    expect([rr.pick(), rr.pick(), rr.pick(), rr.pick()]).toEqual([10, 11, 12, 10]);
    rr.removeWorker(12);
    expect([rr.pick(), rr.pick(), rr.pick()]).toEqual([11, 10, 11]);
  });

  it("returns -1 with no eligible worker and resumes when one joins", () => {
    const rr = new RoundRobinRouter();
    expect(rr.pick()).toBe(-1);
    rr.addWorker(3);
    expect(rr.pick()).toBe(3);
  });
});
