/**
 * `client:` — what the benchmark client measures (a fleetsim extension; the reference has no
 * such section, docs/client.md). Every default leaves the reference's numbers unchanged: no
 * overhead, no timeout.
 */
import * as z from "zod";
import { nonNegNum, posNum } from "./primitives.js";

/** Longest overhead accepted: one minute per request leg (anything larger is a unit slip). */
export const MAX_CLIENT_OVERHEAD_MS = 60_000;
/** Longest client timeout accepted: a year, like the Planner's intervals. */
export const MAX_CLIENT_TIMEOUT_SECONDS = 31_536_000;

const overheadMs = () =>
  nonNegNum().max(MAX_CLIENT_OVERHEAD_MS, { error: `Input should be at most ${MAX_CLIENT_OVERHEAD_MS} ms` });

const Overhead = z.strictObject({
  /**
   * Client send → the router has the request (HTTP handling, chat template, tokenisation).
   * Absent: the calibration profile's (`profile`), else 0.
   */
  request_ms: overheadMs().optional(),
  /** An engine's token (or end of request) → the client has it (detokenisation, SSE chunk). */
  response_ms: overheadMs().default(0),
});

export const Client = z.strictObject({
  /** A calibration profile written by `fleetsim calibrate` (docs/calibrate.md), relative to the config. */
  profile: z.string().min(1).optional(),
  overhead: Overhead.prefault({}),
  /** A request not finished this long after the client sent it is abandoned; absent = never. */
  timeout_seconds: posNum()
    .max(MAX_CLIENT_TIMEOUT_SECONDS, {
      error: `Input should be at most ${MAX_CLIENT_TIMEOUT_SECONDS} seconds (one year)`,
    })
    .nullable()
    .default(null),
});

export type ClientConfig = z.output<typeof Client>;
