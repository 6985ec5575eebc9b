import { TERMINAL_NAMES, Terminal } from "../metrics/collector.js";
import type { ReplayResult } from "../sim/replay.js";

/** One `requests.jsonl` record (aisimulate.md §6.3, the fields that apply to an aggregated pool). */
export interface PerRequestRecord {
  request_id?: string;
  session_id: string;
  turn_index: number;
  uuid: string;
  arrival_time_ms: number;
  dispatched_at_ms: number | null;
  first_admit_ms: number | null;
  terminal_time_ms: number;
  first_token_ms: number | null;
  last_token_ms: number | null;
  ttft_ms: number | null;
  ttst_ms: number | null;
  e2e_latency_ms: number | null;
  /** That request's TPOT: (last − first)/(n − 1), n ≥ 2. */
  itl_ms: number | null;
  input_length: number;
  requested_output_length: number;
  output_length: number;
  reused_input_tokens: number;
  prefill_worker_idx: number | null;
  decode_worker_idx: number | null;
  routing_history: RoutingEntry[];
  admission_history: AdmissionEntry[];
  admission_count: number;
  readmission_count: number;
  terminal_status: string;
}

export interface RoutingEntry {
  pool: "agg";
  outcome: "immediate";
  queue_entered_at_ms: number;
  released_at_ms: number;
  queue_wait_ms: number;
  logical_worker_id: number;
  dp_rank: number;
}

export interface AdmissionEntry {
  admission_ordinal: number;
  pool_admission_ordinal: number;
  pool: "agg";
  at_ms: number;
  reused_input_tokens: number;
  is_readmission: boolean;
}

/** Deterministic request uuid: a version-4-shaped id whose last group is the request row. */
export function requestUuid(row: number): string {
  return `00000000-0000-4000-8000-${row.toString(16).padStart(12, "0")}`;
}

const nullable = (v: number): number | null => (Number.isNaN(v) ? null : v);

/**
 * Records for every request that reached a terminal state, sorted by (request_id, arrival, uuid)
 * as the reference sorts them.
 */
export function buildPerRequest(result: ReplayResult): PerRequestRecord[] {
  const c = result.collector;
  const t = result.table;
  const records: PerRequestRecord[] = [];
  for (let r = 0; r < t.count; r++) {
    const status = c.status[r];
    if (status === Terminal.None) continue;
    const tokens = c.tokens[r];
    const arrival = c.arrival[r];
    const admissions = c.admissionLog?.[r] ?? [];
    const session = t.session[r];
    const worker = c.worker[r];
    const rec: PerRequestRecord = {
      session_id: t.sessionIds[session] ?? `request_${t.sessionFirstRow[session]}`,
      turn_index: t.turn[r],
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
      input_length: t.inputLength[r],
      requested_output_length: t.outputLength[r],
      output_length: tokens,
      reused_input_tokens: c.reusedMax[r],
      prefill_worker_idx: null,
      decode_worker_idx: worker >= 0 ? worker : null,
      routing_history:
        worker >= 0
          ? [
              {
                pool: "agg",
                outcome: "immediate",
                queue_entered_at_ms: c.dispatched[r],
                released_at_ms: c.dispatched[r],
                queue_wait_ms: 0,
                logical_worker_id: worker,
                dp_rank: c.dpRank[r],
              },
            ]
          : [],
      admission_history: admissions.map((a, i) => ({
        admission_ordinal: a.ordinal,
        pool_admission_ordinal: a.ordinal,
        pool: "agg",
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
