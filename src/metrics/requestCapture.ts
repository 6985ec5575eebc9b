/**
 * What `--capture-per-request` keeps of each request beyond the request log's columns, appended
 * in row order as the replay releases rows: the workload's own fields (ids, session, turn,
 * requested output), the admission history and the disaggregated hand-off timeline. The
 * per-request records (report/perRequest.ts) are built from it and the log at the end; a capture
 * run holds one record per request anyway, so this grows with the run by design.
 */
import type { AdmissionRecord, Collector } from "./collector.js";

/** The workload fields of a row the capture keeps (a `RequestSource` has them). */
export interface CapturedFields {
  requestId(row: number): string | null;
  sessionLabel(row: number): string;
  turn(row: number): number;
  outputLength(row: number): number;
}

/** Hand-off columns of the captured rows, in row order (disaggregated runs). */
export interface CapturedHandoff {
  readonly decodeWorker: number[];
  readonly decodeDpRank: number[];
  readonly decodeRouted: number[];
  readonly sourceHeld: number[];
  readonly destinationReserved: number[];
  readonly destinationActivated: number[];
  readonly decodeAdmit: number[];
  readonly sourceReleased: number[];
  readonly decodeReusedTokens: number[];
  readonly decodeRouteOverlapTokens: number[];
  readonly transferredTokens: number[];
}

export class RequestCapture {
  readonly requestIds: (string | null)[] = [];
  readonly sessionLabels: string[] = [];
  readonly turns: number[] = [];
  readonly outputLengths: number[] = [];
  readonly admissions: (readonly AdmissionRecord[])[] = [];
  readonly handoff: CapturedHandoff | null;

  constructor(disaggregated: boolean) {
    this.handoff = disaggregated
      ? {
          decodeWorker: [],
          decodeDpRank: [],
          decodeRouted: [],
          sourceHeld: [],
          destinationReserved: [],
          destinationActivated: [],
          decodeAdmit: [],
          sourceReleased: [],
          decodeReusedTokens: [],
          decodeRouteOverlapTokens: [],
          transferredTokens: [],
        }
      : null;
  }

  /** Appends row `row` (the next one in row order) as the collector and the workload hold it. */
  append(c: Collector, row: number, fields: CapturedFields): void {
    if (row !== this.requestIds.length)
      throw new Error(`internal: request capture got row ${row}, expected ${this.requestIds.length}`);
    const i = row & c.mask;
    this.requestIds.push(fields.requestId(row));
    this.sessionLabels.push(fields.sessionLabel(row));
    this.turns.push(fields.turn(row));
    this.outputLengths.push(fields.outputLength(row));
    this.admissions.push(c.admissionLog?.[i] ?? []);
    const h = this.handoff;
    const src = c.handoff;
    if (h !== null && src !== null) {
      h.decodeWorker.push(src.decodeWorker[i]);
      h.decodeDpRank.push(src.decodeDpRank[i]);
      h.decodeRouted.push(src.decodeRouted[i]);
      h.sourceHeld.push(src.sourceHeld[i]);
      h.destinationReserved.push(src.destinationReserved[i]);
      h.destinationActivated.push(src.destinationActivated[i]);
      h.decodeAdmit.push(src.decodeAdmit[i]);
      h.sourceReleased.push(src.sourceReleased[i]);
      h.decodeReusedTokens.push(src.decodeReusedTokens[i]);
      h.decodeRouteOverlapTokens.push(src.decodeRouteOverlapTokens[i]);
      h.transferredTokens.push(src.transferredTokens[i]);
    }
  }
}
