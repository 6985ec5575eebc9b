/**
 * A Mooncake trace read as the replay's clock reaches it (docs/performance.md "Memory"): the
 * `RequestSource` of a trace whose every row is a single-turn request replayed on its timestamps,
 * in timestamp order. Only the rows read and not yet released by the replay are in memory: their
 * lengths and ids in the row window's slots, their engine-block hashes packed in shared chunks
 * (`HashChunks`), so memory follows the requests in flight, not the trace's length.
 *
 * Two passes over the file. The first (`openMooncakeStream`) validates every line with the table
 * loader's rules (`traffic/mooncake/row.ts`), so a malformed row fails the run before it starts, with the
 * same message as a table load, and learns what the replay needs up front: the row count, the
 * first timestamp (rows are shifted so it is 0, as the loader does), the last one, the longest
 * context. It returns null when the trace cannot be streamed — a `session_id` seen twice (later
 * turns wait for their previous turn), or a timestamp earlier than the previous row's — and the
 * caller loads the table instead. The second pass (`fill`) reads a chunk of the file at a time.
 * A trace that changed between the passes fails with a TraceError at the line where they differ.
 *
 * A trace whose rows fit `RETAIN_BYTES` (about 2.5 M rows of the FAST'25 traces) is kept as the
 * first pass parsed it — timestamps, lengths, hash ids, request and session ids in typed columns —
 * and the second pass reads those instead of parsing the file again (the parse was a third of the
 * replay's reading cost); a longer one is read again, in bounded memory, as before.
 *
 * **Lazy hashes.** When the rows are kept, a row's prompt is hashed only up to `ownerOnlyFrom`:
 * the blocks from there on hold content no other row has, so no other request's lookup can reach
 * them, and an engine keeps them without hashes (engine/kvBlockPool.ts "Owner-only runs"). About
 * half of the FAST'25 conversation trace's prompt blocks are such. The rest is hashed from the
 * kept hash ids when a use needs it (`completePromptHashes`, through `Sequence.completePromptHashes`
 * or `completeRowHashes`): a request that leaves an engine without completing (its blocks are
 * then indexed), an engine that indexes every block (a host tier, KV events), an SGLang radix
 * cache, a KV-aware router.
 */
import { RowWindow, relayoutArray, relayoutI32 } from "../../util/rowWindow.js";
import { computeBlockHashes, computeBlockHashPrefix, fullBlockCount } from "../blockHashes.js";
import { GrowableF64, GrowableI32, GrowableU32 } from "../columns.js";
import { JsonlLineReader, readJsonlLines } from "../jsonlReader.js";
import { TokenBlockCounts } from "../ownerOnlyBlocks.js";
import type { PromptHashCompleter, RequestSource, WorkloadInfo } from "../requestSource.js";
import type { RequestTable } from "../requests.js";
import { TraceError } from "../traceError.js";
import { checkFirstTurn, MooncakeRowParser } from "./row.js";

export interface MooncakeStreamOptions {
  /** Tokens per trace hash block (`traffic.source.block_size`). */
  readonly traceBlockSize: number;
  /** Engine KV block size the sequence hashes are computed for. */
  readonly engineBlockSize: number;
  /** `trace_timestamps` speedup: a row arrives at its (shifted) timestamp ÷ speedup. */
  readonly speedup: number;
  /** Slots of the row window at the start (tests: small, to exercise its growth). */
  readonly initialWindowRows?: number;
  /** Doubles per hash chunk (tests: small). */
  readonly hashChunkSize?: number;
  /** Bytes of the trace read at a time (default 1 MiB; tests: small, to stream a small file). */
  readonly readChunkBytes?: number;
  /** Keep the first pass's rows for the second (default true; tests: false, to read the file twice). */
  readonly retainRows?: boolean;
  /** Hash only what a lookup can reach when the rows are kept ("Lazy hashes"; default true; tests: false). */
  readonly lazyHashes?: boolean;
}

/** What the first pass learned. */
interface FirstPass {
  readonly rows: number;
  readonly firstMs: number;
  readonly lastMs: number;
  readonly longestContext: number;
  /** Every row as parsed, when they fit `RETAIN_BYTES`; null when the second pass reads the file. */
  readonly retained: RetainedRows | null;
  /** Every row's hash ids counted: which prompt blocks only their row holds. */
  readonly tokenBlocks: TokenBlockCounts;
}

/** Bytes of parsed rows the first pass keeps for the second (`RetainedRows`). */
export const RETAIN_BYTES = 64 * 2 ** 20;

/**
 * Bytes `RetainedRows` allocates for a trace (without the strings): what it keeps, at most
 * `RETAIN_BYTES` (a longer trace's rows are dropped there), times two for the columns' doubling
 * capacity.
 */
export function retainedBytes(rows: number, hashIds: number): number {
  return 2 * Math.min(RETAIN_BYTES, rows * RETAINED_BYTES_PER_ROW + 4 * hashIds);
}

/** A retained row's timestamp, lengths and id offset, and its share of the column objects. */
const RETAINED_BYTES_PER_ROW = 40;

/** The rows of a trace as the first pass parsed them, in row order. */
class RetainedRows {
  // The columns start small: they double within the first rows, so `add` has run its growth path
  // before it is optimized. Starting at a few thousand entries, the first doubling came after the
  // optimization and deoptimized `add` (docs/performance.md "Deoptimizations").
  readonly timestampMs = new GrowableF64(16);
  readonly inputLength = new GrowableI32(16);
  readonly outputLength = new GrowableI32(16);
  /** Row r's hash ids are `ids[idStart[r] .. idStart[r + 1])`. */
  readonly idStart = new GrowableI32(16);
  readonly ids = new GrowableU32(256);
  readonly requestIds: (string | null)[] = [];
  readonly sessionIds: (string | null)[] = [];
  /** Bytes held, strings counted at two bytes a character. */
  bytes = 0;

  constructor() {
    this.idStart.push(0);
  }

  /** Keeps one row; false once the rows would exceed `RETAIN_BYTES` (the caller drops them). */
  add(
    timestampMs: number,
    inputLength: number,
    outputLength: number,
    ids: GrowableU32,
    requestId: string | null,
    sessionId: string | null,
  ): boolean {
    this.bytes +=
      RETAINED_BYTES_PER_ROW + 4 * ids.length + 2 * ((requestId?.length ?? 0) + (sessionId?.length ?? 0));
    if (this.bytes > RETAIN_BYTES) return false;
    this.timestampMs.push(timestampMs);
    this.inputLength.push(inputLength);
    this.outputLength.push(outputLength);
    for (let k = 0; k < ids.length; k++) this.ids.push(ids.data[k]);
    this.idStart.push(this.ids.length);
    this.requestIds.push(requestId);
    this.sessionIds.push(sessionId);
    return true;
  }
}

/**
 * Validates the trace and sizes it (the first pass); null when it is not a stream of single-turn
 * requests in timestamp order.
 */
async function firstPass(path: string, traceBlockSize: number, retain: boolean): Promise<FirstPass | null> {
  const parser = new MooncakeRowParser(path, traceBlockSize);
  const ids = new GrowableU32(256);
  const sessions = new Set<string>();
  let rows = 0;
  let firstMs = Number.NaN;
  let lastMs = Number.NaN;
  let longest = -1;
  let retained: RetainedRows | null = retain ? new RetainedRows() : null;
  const tokenBlocks = new TokenBlockCounts();
  try {
    await readJsonlLines(path, (text, lineNo) => {
      ids.length = 0;
      const f = parser.parse(text, lineNo, ids);
      const id = f.sessionId;
      if (id !== null) {
        if (sessions.has(id)) throw NOT_STREAMABLE; // a later turn
        sessions.add(id);
      }
      checkFirstTurn(parser, f, true);
      if (f.timestampMs < lastMs) throw NOT_STREAMABLE; // out of timestamp order
      if (rows === 0) firstMs = f.timestampMs;
      lastMs = f.timestampMs;
      const ctx = f.inputLength + f.outputLength - 1;
      if (ctx > longest) longest = ctx;
      tokenBlocks.add(ids.data, 0, f.hashIdCount);
      if (
        retained !== null &&
        !retained.add(f.timestampMs, f.inputLength, f.outputLength, ids, f.requestId, f.sessionId)
      )
        retained = null;
      rows++;
    });
  } catch (err) {
    if (err === NOT_STREAMABLE) return null;
    throw err;
  }
  if (rows === 0) throw new TraceError(path, 0, "trace has no rows");
  return { rows, firstMs, lastMs, longestContext: longest, retained, tokenBlocks };
}

/** Thrown out of the first pass's line callback to stop it (not an error: the table loader takes over). */
const NOT_STREAMABLE = new Error("not streamable");

/**
 * The stream of a Mooncake trace, or null when it must be loaded as a table (later session
 * turns, rows out of timestamp order). Validates every row first.
 */
export async function openMooncakeStream(
  path: string,
  opts: MooncakeStreamOptions,
): Promise<MooncakeStream | null> {
  const pass = await firstPass(path, opts.traceBlockSize, opts.retainRows ?? true);
  return pass === null ? null : new MooncakeStream(path, opts, pass);
}

const EMPTY_HASHES = new Float64Array(0);
const DEFAULT_HASH_CHUNK = 1 << 16;

/**
 * Engine-block hashes of the rows in flight, packed: each row's hashes lie in one chunk of
 * `chunkSize` doubles, rows appended in row order; a row longer than a quarter chunk gets an
 * array of its own. A chunk is garbage once its rows are released (and the engines dropped their
 * sequences, which hold the chunk while they live).
 */
class HashChunks {
  /** Where the hashes of the row placed last go: `array[start .. start + n)`. */
  array: Float64Array = EMPTY_HASHES;
  start = 0;
  private chunk: Float64Array;
  private used = 0;

  constructor(private readonly chunkSize: number) {
    this.chunk = new Float64Array(chunkSize);
  }

  /** Room for `n` hashes: sets `array` and `start`. */
  place(n: number): void {
    if (n === 0) {
      this.array = EMPTY_HASHES;
      this.start = 0;
      return;
    }
    if (n > this.chunkSize >>> 2) {
      this.array = new Float64Array(n);
      this.start = 0;
      return;
    }
    if (this.used + n > this.chunkSize) {
      this.chunk = new Float64Array(this.chunkSize);
      this.used = 0;
    }
    this.array = this.chunk;
    this.start = this.used;
    this.used += n;
  }
}

export class MooncakeStream implements RequestSource, PromptHashCompleter {
  readonly engineBlockSize: number;
  readonly info: WorkloadInfo;
  readonly window: RowWindow;
  readonly table: RequestTable | null = null;
  readyUntilMs = Number.NEGATIVE_INFINITY;
  onRead: ((row: number, arrivalMs: number) => void) | null = null;
  private readonly traceBlockSize: number;
  private readonly speedup: number;
  /** The first pass's first timestamp: every row shifts by it (the loader's normalization). */
  private readonly shiftMs: number;
  private readonly rows: number;
  private readonly readChunkBytes: number | undefined;
  private reader: JsonlLineReader | null = null;
  /** The first pass's rows, read instead of the file when it kept them. */
  private readonly retained: RetainedRows | null;
  private readonly tokenBlocks: TokenBlockCounts;
  private readonly parser: MooncakeRowParser;
  private readonly ids = new GrowableU32(256);
  private readonly chunks: HashChunks;
  private lastMs = Number.NEGATIVE_INFINITY;
  // Per live row, at slot row & mask.
  private mask: number;
  private inputLengths: Int32Array;
  private outputLengths: Int32Array;
  private hashStarts: Int32Array;
  private hashCounts: Int32Array;
  private hashedCounts: Int32Array;
  private ownerOnlyFroms: Int32Array;
  /** Rows hashed only up to `ownerOnlyFrom` ("Lazy hashes"); null when each row is hashed whole. */
  readonly hashCompleter: PromptHashCompleter | null;
  private hashArrays: Float64Array[];
  private requestIds: (string | null)[];
  private sessionIds: (string | null)[];

  constructor(
    private readonly path: string,
    opts: MooncakeStreamOptions,
    pass: FirstPass,
  ) {
    this.engineBlockSize = opts.engineBlockSize;
    this.traceBlockSize = opts.traceBlockSize;
    this.speedup = opts.speedup;
    this.rows = pass.rows;
    this.shiftMs = pass.firstMs;
    this.readChunkBytes = opts.readChunkBytes;
    this.retained = pass.retained;
    // Completing a row later needs its hash ids: only the kept rows have them.
    this.hashCompleter = pass.retained !== null && opts.lazyHashes !== false ? this : null;
    this.tokenBlocks = pass.tokenBlocks;
    this.chunks = new HashChunks(opts.hashChunkSize ?? DEFAULT_HASH_CHUNK);
    this.info = {
      count: pass.rows,
      sessionCount: pass.rows,
      lastFirstTurnMs: this.shifted(pass.lastMs),
      longestContext: pass.longestContext,
      hasLaterTurns: false,
    };
    this.parser = new MooncakeRowParser(path, opts.traceBlockSize);
    const window = new RowWindow(opts.initialWindowRows ?? 4096);
    this.window = window;
    const n = window.capacity;
    this.mask = window.mask;
    this.inputLengths = new Int32Array(n);
    this.outputLengths = new Int32Array(n);
    this.hashStarts = new Int32Array(n);
    this.hashCounts = new Int32Array(n);
    this.hashedCounts = new Int32Array(n);
    this.ownerOnlyFroms = new Int32Array(n);
    this.hashArrays = new Array<Float64Array>(n).fill(EMPTY_HASHES);
    this.requestIds = new Array<string | null>(n).fill(null);
    this.sessionIds = new Array<string | null>(n).fill(null);
    window.register(this);
  }

  /** A trace timestamp on the replay's axis (the first row at 0), as the table loader shifts it. */
  private shifted(ts: number): number {
    return this.shiftMs !== 0 ? ts - this.shiftMs : ts;
  }

  relayout(first: number, end: number, oldMask: number, capacity: number): void {
    this.inputLengths = relayoutI32(this.inputLengths, first, end, oldMask, capacity, 0);
    this.outputLengths = relayoutI32(this.outputLengths, first, end, oldMask, capacity, 0);
    this.hashStarts = relayoutI32(this.hashStarts, first, end, oldMask, capacity, 0);
    this.hashCounts = relayoutI32(this.hashCounts, first, end, oldMask, capacity, 0);
    this.hashedCounts = relayoutI32(this.hashedCounts, first, end, oldMask, capacity, 0);
    this.ownerOnlyFroms = relayoutI32(this.ownerOnlyFroms, first, end, oldMask, capacity, 0);
    this.hashArrays = relayoutArray(this.hashArrays, first, end, oldMask, capacity, EMPTY_HASHES);
    this.requestIds = relayoutArray(this.requestIds, first, end, oldMask, capacity, null);
    this.sessionIds = relayoutArray(this.sessionIds, first, end, oldMask, capacity, null);
    this.mask = capacity - 1;
  }

  async fill(untilMs: number): Promise<void> {
    const kept = this.retained;
    if (kept !== null) {
      while (this.readyUntilMs <= untilMs && this.readyUntilMs !== Number.POSITIVE_INFINITY) {
        const row = this.window.read;
        if (row === this.rows) {
          this.end();
          break;
        }
        const from = kept.idStart.data[row];
        this.addRow(
          kept.timestampMs.data[row],
          kept.inputLength.data[row],
          kept.outputLength.data[row],
          kept.ids.data,
          from,
          kept.idStart.data[row + 1] - from,
          kept.requestIds[row],
          kept.sessionIds[row],
        );
      }
      return;
    }
    if (this.reader === null && this.window.read === 0)
      this.reader = await JsonlLineReader.open(this.path, this.readChunkBytes);
    const reader = this.reader;
    while (this.readyUntilMs <= untilMs && this.readyUntilMs !== Number.POSITIVE_INFINITY) {
      if (reader === null || !(await reader.readChunk(this.onLine))) this.end();
    }
  }

  /** The file ended: every row must have been read. */
  private end(): void {
    if (this.window.read !== this.rows) {
      throw new TraceError(
        this.path,
        0,
        `the trace changed while it was read: ${this.window.read} rows now, ${this.rows} at the start`,
      );
    }
    this.reader = null;
    this.readyUntilMs = Number.POSITIVE_INFINITY;
  }

  private readonly onLine = (text: string, lineNo: number): void => {
    const ids = this.ids;
    ids.length = 0;
    const parser = this.parser;
    const f = parser.parse(text, lineNo, ids);
    const row = this.window.read;
    // The first pass accepted every row as a stream; a row it would not have means the file changed.
    if (row >= this.rows || !(f.timestampMs >= this.lastMs))
      throw parser.error("timestamp", "the trace changed while it was read (a row added or out of order)");
    this.addRow(
      f.timestampMs,
      f.inputLength,
      f.outputLength,
      ids.data,
      0,
      f.hashIdCount,
      f.requestId,
      f.sessionId,
    );
  };

  /** The next row, read from the file or from the first pass's rows: hashed and placed in the window. */
  private addRow(
    timestampMs: number,
    isl: number,
    outputLength: number,
    ids: Uint32Array,
    idStart: number,
    idCount: number,
    requestId: string | null,
    sessionId: string | null,
  ): void {
    const row = this.window.read;
    this.lastMs = timestampMs;
    this.window.reserve(row + 1);
    const i = row & this.mask;
    const n = fullBlockCount(isl, this.engineBlockSize);
    const place = this.chunks;
    place.place(n);
    const ownerOnlyFrom = this.tokenBlocks.ownerOnlyFrom(
      ids,
      idStart,
      idCount,
      isl,
      this.traceBlockSize,
      this.engineBlockSize,
    );
    // Room for all n hashes either way: completing the row later fills the rest in place.
    this.hashedCounts[i] = computeBlockHashPrefix(
      ids,
      idStart,
      idCount,
      this.traceBlockSize,
      isl,
      this.engineBlockSize,
      place.array,
      place.start,
      this.hashCompleter !== null ? ownerOnlyFrom : n,
    );
    this.inputLengths[i] = isl;
    this.outputLengths[i] = outputLength;
    this.hashArrays[i] = place.array;
    this.hashStarts[i] = place.start;
    this.hashCounts[i] = n;
    this.ownerOnlyFroms[i] = ownerOnlyFrom;
    this.requestIds[i] = requestId;
    this.sessionIds[i] = sessionId;
    this.window.read = row + 1;
    const arrival = this.shifted(timestampMs) / this.speedup;
    this.readyUntilMs = arrival;
    this.onRead?.(row, arrival);
  }

  inputLength(row: number): number {
    return this.inputLengths[row & this.mask];
  }

  outputLength(row: number): number {
    return this.outputLengths[row & this.mask];
  }

  /** Every row is a session of its own: sessions are numbered as rows. */
  session(row: number): number {
    return row;
  }

  hashes(row: number): Float64Array {
    return this.hashArrays[row & this.mask];
  }

  hashStart(row: number): number {
    return this.hashStarts[row & this.mask];
  }

  hashCount(row: number): number {
    return this.hashCounts[row & this.mask];
  }

  hashedCount(row: number): number {
    return this.hashedCounts[row & this.mask];
  }

  completePromptHashes(row: number, out: Float64Array, outStart: number): void {
    const kept = this.retained;
    if (kept === null)
      throw new Error("internal: a stream that did not keep its rows cannot hash them later");
    const from = kept.idStart.data[row];
    const n = computeBlockHashes(
      kept.ids.data,
      from,
      kept.idStart.data[row + 1] - from,
      this.traceBlockSize,
      kept.inputLength.data[row],
      this.engineBlockSize,
      out,
      outStart,
    );
    const window = this.window;
    if (row >= window.freed && row < window.read) this.hashedCounts[row & this.mask] = n;
  }

  ownerOnlyFrom(row: number): number {
    return this.ownerOnlyFroms[row & this.mask];
  }

  requestId(row: number): string | null {
    return this.requestIds[row & this.mask];
  }

  sessionLabel(row: number): string {
    return this.sessionIds[row & this.mask] ?? `request_${row}`;
  }

  turn(_row: number): number {
    return 0;
  }

  release(row: number): void {
    const i = row & this.mask;
    this.hashArrays[i] = EMPTY_HASHES;
    this.requestIds[i] = null;
    this.sessionIds[i] = null;
  }

  close(): void {
    this.reader?.close();
    this.reader = null;
  }
}
