import { TERMINAL_NAMES, Terminal } from "../metrics/collector.js";
import type { AdmissionEntry, PerRequestRecord, RoutingEntry } from "../output/perRequest.js";
import type { ReplayResult } from "../sim/result.js";

/** One `requests.jsonl` record: its contract (types and schema) is src/output/perRequest.ts. */
export type { AdmissionEntry, PerRequestRecord, RoutingEntry };

/** Deterministic request uuid: a version-4-shaped id whose last group is the request row. */
export function requestUuid(row: number): string {
  return `00000000-0000-4000-8000-${row.toString(16).padStart(12, "0")}`;
}

const nullable = (v: number): number | null => (Number.isNaN(v) ? null : v);

function route(
  pool: RoutingEntry["pool"],
  at: number,
  worker: number,
  dpRank: number,
  overlapTokens: number,
): RoutingEntry {
  return {
    pool,
    outcome: "immediate",
    queue_entered_at_ms: at,
    released_at_ms: at,
    queue_wait_ms: 0,
    logical_worker_id: worker,
    dp_rank: dpRank,
    reported_overlap_tokens: overlapTokens,
  };
}

/**
 * Records for every request that reached a terminal state, sorted by (request_id, arrival, uuid)
 * as the reference sorts them: from the request log's columns and what the run captured
 * (`ReplayOptions.capturePerRequest`).
 */
export function buildPerRequest(result: Pick<ReplayResult, "requests" | "capture">): PerRequestRecord[] {
  const t = result.capture;
  if (t === null) throw new Error("internal: per-request records need a replay run with capturePerRequest");
  const c = result.requests.columns();
  const records: PerRequestRecord[] = [];
  for (let r = 0; r < result.requests.count; r++) {
    const status = c.status[r];
    if (status === Terminal.None) continue;
    const tokens = c.tokens[r];
    const arrival = c.arrival[r];
    const admissions = t.admissions[r];
    const worker = c.worker[r];
    const h = t.handoff;
    const frontPool = h === null ? "agg" : "prefill";
    const routing: RoutingEntry[] = [];
    if (worker >= 0) {
      routing.push(route(frontPool, c.dispatched[r], worker, c.dpRank[r], c.routeOverlapTokens[r]));
    }
    if (h !== null && h.decodeWorker[r] >= 0) {
      // Routed before its prefill ended (or with no prefill end): a destination-first hand-off (SGLang).
      const destinationFirst = !(h.decodeRouted[r] >= h.sourceHeld[r]);
      const decode = route(
        "decode",
        destinationFirst ? h.decodeRouted[r] : h.sourceHeld[r],
        h.decodeWorker[r],
        h.decodeDpRank[r],
        h.decodeRouteOverlapTokens[r],
      );
      // In time order: a destination-first hand-off routes to decode before the prefill.
      if (destinationFirst) routing.unshift(decode);
      else routing.push(decode);
    }
    const rec: PerRequestRecord = {
      session_id: t.sessionLabels[r],
      turn_index: t.turns[r],
      uuid: requestUuid(r),
      arrival_time_ms: arrival,
      dispatched_at_ms: nullable(c.dispatched[r]),
      first_admit_ms: nullable(c.firstAdmit[r]),
      terminal_time_ms: c.terminal[r],
      first_token_ms: nullable(c.firstToken[r]),
      last_token_ms: nullable(c.lastToken[r]),
      ttft_ms: tokens >= 1 ? Math.max(0, c.firstToken[r] - arrival) : null,
      ttst_ms: tokens >= 2 ? c.secondToken[r] - c.firstToken[r] : null,
      e2e_latency_ms: tokens >= 1 ? c.lastToken[r] - arrival : null,
      itl_ms: tokens >= 2 ? (c.lastToken[r] - c.firstToken[r]) / (tokens - 1) : null,
      input_length: c.inputLength[r],
      requested_output_length: t.outputLengths[r],
      output_length: tokens,
      reused_input_tokens: c.reusedMax[r],
      prefill_worker_idx: h === null || worker < 0 ? null : worker,
      decode_worker_idx:
        h === null ? (worker >= 0 ? worker : null) : h.decodeWorker[r] >= 0 ? h.decodeWorker[r] : null,
      prefill_admit_ms: h === null ? null : nullable(c.firstAdmit[r]),
      source_held_ms: h === null ? null : nullable(h.sourceHeld[r]),
      destination_reserved_ms: h === null ? null : nullable(h.destinationReserved[r]),
      destination_activated_ms: h === null ? null : nullable(h.destinationActivated[r]),
      decode_admit_ms: h === null ? null : nullable(h.decodeAdmit[r]),
      source_released_ms: h === null ? null : nullable(h.sourceReleased[r]),
      decode_reused_input_tokens: h === null || h.decodeWorker[r] < 0 ? null : h.decodeReusedTokens[r],
      prefill_route_overlap_tokens: h === null || worker < 0 ? null : c.routeOverlapTokens[r],
      decode_route_overlap_tokens: h === null || h.decodeWorker[r] < 0 ? null : h.decodeRouteOverlapTokens[r],
      transferred_tokens:
        h === null || Number.isNaN(h.destinationReserved[r]) ? null : h.transferredTokens[r],
      routing_history: routing,
      admission_history: admissions.map((a, i) => ({
        admission_ordinal: a.ordinal,
        pool_admission_ordinal: a.ordinal,
        pool: frontPool,
        at_ms: a.at,
        reused_input_tokens: a.reused,
        is_readmission: i > 0,
      })),
      admission_count: c.admissions[r],
      readmission_count: Math.max(0, c.admissions[r] - 1),
      terminal_status: TERMINAL_NAMES[status],
    };
    const requestId = t.requestIds[r];
    if (requestId !== null) rec.request_id = requestId;
    records.push(rec);
  }
  records.sort((a, b) => {
    const ra = a.request_id ?? "";
    const rb = b.request_id ?? "";
    if (ra !== rb) return ra < rb ? -1 : 1;
    if (a.arrival_time_ms !== b.arrival_time_ms) return a.arrival_time_ms - b.arrival_time_ms;
    return a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0;
  });
  return records;
}
