/** The retune controller's pure logic (docs/retune.md §4–§10): no processes, no simulator. */
export * from "./buckets.js";
export * from "./decision.js";
export * from "./grid.js";
export * from "./points.js";
export * from "./predictorPresweep.js";
export * from "./scoring.js";
export * from "./timing.js";
export * from "./windows.js";
