/**
 * The event heap: simulation events keyed by (time, order). `order` encodes the same-timestamp
 * phase and a stable id (see `eventOrder`), so ties never depend on insertion luck (ARCHITECTURE
 * "Same input, same bytes"; `ai-dynamo/aisimulate@6f9a315:crates/core/src/replay/README.md`). The heap itself is util/minHeap.ts.
 */
export { MinHeap as EventHeap } from "../util/minHeap.js";

/**
 * Same-timestamp phase order (`ai-dynamo/aisimulate@6f9a315:crates/core/src/replay/README.md`): pass completion, worker ready, transfer
 * completion, admission (arrivals), telemetry, scaling.
 */
export const Phase = {
  PassCompletion: 0,
  WorkerReady: 1,
  TransferComplete: 2,
  Arrival: 3,
  Telemetry: 4,
  Scaling: 5,
} as const;

const ID_SPAN = 2 ** 40;

/** Order key: phase first, then a stable id (< 2^40) within the phase. */
export function eventOrder(phase: number, stableId: number): number {
  return phase * ID_SPAN + stableId;
}

/** The phase of an order key (`eventOrder`'s inverse, first half). */
export function phaseOfOrder(order: number): number {
  return Math.floor(order / ID_SPAN);
}
