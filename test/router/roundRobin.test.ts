import { describe, expect, it } from "vitest";
import { RoundRobinRouter } from "../../src/router/roundRobin.js";

// The rule of Dynamo's offline replay (src/router/roundRobin.ts): pick index = next % count,
// then next = index + 1, unwrapped; topology changes leave `next` where it is.
describe("round-robin placement", () => {
  it("rotates in worker-id order and keeps its position when a worker leaves (10, 11, 12, 10 → drain 12 → 11)", () => {
    const rr = new RoundRobinRouter();
    for (const w of [12, 10, 11]) rr.addWorker(w);
    expect([rr.pick(), rr.pick(), rr.pick(), rr.pick()]).toEqual([10, 11, 12, 10]);
    rr.removeWorker(12);
    expect([rr.pick(), rr.pick(), rr.pick()]).toEqual([11, 10, 11]);
  });

  it("sends the next request to a worker that joins after a lone worker's picks (the Planner's first scale-up)", () => {
    const rr = new RoundRobinRouter();
    rr.addWorker(0);
    expect([rr.pick(), rr.pick(), rr.pick()]).toEqual([0, 0, 0]);
    rr.addWorker(1);
    expect([rr.pick(), rr.pick(), rr.pick()]).toEqual([1, 0, 1]);
    rr.addWorker(2);
    // next = 2 after the pick at index 1: with three workers that is the new worker 2.
    expect([rr.pick(), rr.pick(), rr.pick(), rr.pick()]).toEqual([2, 0, 1, 2]);
  });

  it("does not shift its position when a worker before it leaves ([10, 11, 12] at 12, drain 10 → 11)", () => {
    const rr = new RoundRobinRouter();
    for (const w of [10, 11, 12]) rr.addWorker(w);
    expect([rr.pick(), rr.pick()]).toEqual([10, 11]);
    rr.removeWorker(10);
    // next = 2, two eligible: index 0.
    expect([rr.pick(), rr.pick()]).toEqual([11, 12]);
  });

  it("returns -1 with no eligible worker and resumes when one joins", () => {
    const rr = new RoundRobinRouter();
    expect(rr.pick()).toBe(-1);
    rr.addWorker(3);
    expect(rr.pick()).toBe(3);
  });
});
