/**
 * Streaming line reader for JSONL traces, plain or gzip (detected by the magic bytes 1f 8b, not the
 * extension; multi-member gzip is handled by zlib). Memory is bounded by the chunk size plus the
 * longest line: the file is never held as one string. A line may not exceed `MAX_LINE_CHARS` and
 * may not hold a NUL byte: a file without line breaks, or binary content, is an error naming the
 * file and line as soon as it is seen, not minutes of buffering (docs/traces.md "Limits").
 */
import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { StringDecoder } from "node:string_decoder";
import { TraceError } from "./traceError.js";

/** Receives each non-blank line (without `\n` / `\r\n`) and its 1-based physical line number. */
export type LineCallback = (line: string, lineNo: number) => void;

const CHUNK = 1 << 20;

/**
 * The longest line a trace may hold, 16 Mi characters: a Mooncake or Dynamo record is one line of
 * at most a few hundred KiB (a 128k-token prompt is 256 hash ids), so a longer line is a file that
 * is not a JSONL trace, or is missing its line breaks.
 */
export const MAX_LINE_CHARS = 16 * 1024 * 1024;

/** The error for a line longer than `MAX_LINE_CHARS` (also the preflight's trace scan's). */
export function lineTooLong(path: string, lineNo: number): TraceError {
  return new TraceError(
    path,
    lineNo,
    "the line is longer than 16 MiB without a line break: not a JSONL trace (a record is one line of at most a few hundred KiB)",
  );
}

/** The error for a NUL byte: binary content where a JSONL trace has text. */
export function binaryContent(path: string, lineNo: number): TraceError {
  return new TraceError(
    path,
    lineNo,
    "binary content (a NUL byte): a JSONL trace is text, one JSON record a line",
  );
}

/** True when the file starts with the gzip magic bytes. Throws TraceError if it cannot be opened. */
export async function isGzipFile(path: string): Promise<boolean> {
  let fh: Awaited<ReturnType<typeof open>> | undefined;
  try {
    fh = await open(path, "r");
    const buf = Buffer.alloc(2);
    const { bytesRead } = await fh.read(buf, 0, 2, 0);
    return bytesRead === 2 && buf[0] === 0x1f && buf[1] === 0x8b;
  } catch (err) {
    throw new TraceError(path, 0, `cannot read trace file: ${errorText(err)}`);
  } finally {
    await fh?.close();
  }
}

/** An open trace file: its bytes (gunzipped when gzip, by magic bytes) in 1 MiB reads. */
export interface TraceStream {
  readonly stream: NodeJS.ReadableStream & AsyncIterable<Buffer>;
  readonly gzip: boolean;
  /** Closes the file (also mid-read). */
  close(): void;
}

/** `chunkBytes`: the size of each read (tests: small, to stream a small file in many pieces). */
export async function openTraceStream(path: string, chunkBytes = CHUNK): Promise<TraceStream> {
  const gzip = await isGzipFile(path);
  const source = createReadStream(path, { highWaterMark: chunkBytes });
  const close = (): void => {
    source.destroy();
  };
  if (!gzip) return { stream: source, gzip, close };
  // `node:zlib` (and the stream modules it brings) loads with the first gzip trace, not at start-up.
  const gunzip = process.getBuiltinModule("node:zlib").createGunzip({ chunkSize: 256 * 1024 });
  source.on("error", (err) => gunzip.destroy(err));
  return { stream: source.pipe(gunzip), gzip, close };
}

/**
 * Calls `onLine` synchronously for every non-blank line of `path`. Errors thrown by `onLine` propagate
 * unchanged (the stream is closed); I/O and gzip errors become TraceError with line 0.
 */
export async function readJsonlLines(path: string, onLine: LineCallback): Promise<void> {
  const reader = await JsonlLineReader.open(path);
  try {
    while (await reader.readChunk(onLine));
  } finally {
    reader.close();
  }
}

/**
 * The lines of a JSONL trace read a chunk at a time, when the caller asks (a trace streamed as the
 * replay's clock reaches it: traffic/mooncake/stream.ts). Same lines, numbers and errors as
 * `readJsonlLines`.
 */
export class JsonlLineReader {
  private readonly decoder = new StringDecoder("utf8");
  private rest = "";
  private lineNo = 0;
  private first = true;
  private ended = false;
  private inCallback = false;

  private constructor(
    readonly path: string,
    private readonly trace: TraceStream,
    private readonly chunks: AsyncIterator<Buffer>,
  ) {}

  static async open(path: string, chunkBytes?: number): Promise<JsonlLineReader> {
    const trace = await openTraceStream(path, chunkBytes);
    const chunks = (trace.stream as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    return new JsonlLineReader(path, trace, chunks);
  }

  /** Whether every line was delivered. */
  get done(): boolean {
    return this.ended;
  }

  /**
   * Reads the next chunk of the file and calls `onLine` for each line it completes (the last
   * line once the file ends). Resolves false when the file has ended.
   */
  async readChunk(onLine: LineCallback): Promise<boolean> {
    if (this.ended) return false;
    let next: IteratorResult<Buffer>;
    try {
      next = await this.chunks.next();
    } catch (err) {
      this.close();
      throw new TraceError(
        this.path,
        0,
        `${this.trace.gzip ? "cannot decompress" : "cannot read"} trace file: ${errorText(err)}`,
      );
    }
    try {
      if (next.done === true) {
        this.ended = true;
        this.close();
        const tail = this.rest + this.decoder.end();
        this.rest = "";
        if (tail.length > 0) {
          this.lineNo++;
          if (tail.length > MAX_LINE_CHARS) throw lineTooLong(this.path, this.lineNo);
          if (tail.includes("\0")) throw binaryContent(this.path, this.lineNo);
          this.emit(tail, 0, tail.length, onLine);
        }
        return false;
      }
      const decoded = this.decoder.write(next.value);
      // `rest` holds no line break and no NUL: a chunk without either only extends it (a string
      // rope, not copied), and a search starts where the new text does, so a long line costs its
      // length once, not once per chunk.
      if (decoded.indexOf("\n") < 0 && decoded.indexOf("\0") < 0) {
        this.rest += decoded;
        if (this.rest.length > MAX_LINE_CHARS) throw lineTooLong(this.path, this.lineNo + 1);
        return true;
      }
      const from = this.rest.length;
      this.emitFrom(from === 0 ? decoded : this.rest + decoded, from, onLine);
    } catch (err) {
      this.close();
      if (this.inCallback || err instanceof TraceError) throw err;
      throw new TraceError(this.path, 0, `cannot read trace file: ${errorText(err)}`);
    } finally {
      this.inCallback = false;
    }
    return true;
  }

  /** Closes the file (also mid-read). */
  close(): void {
    this.trace.close();
  }

  private emitFrom(text: string, from: number, onLine: LineCallback): void {
    const nul = text.indexOf("\0", from);
    let start = 0;
    for (
      let nl = text.indexOf("\n", from);
      nl >= 0 && (nul < 0 || nl < nul);
      nl = text.indexOf("\n", start)
    ) {
      this.lineNo++;
      if (
        nl - start > MAX_LINE_CHARS &&
        nl - start - (text.charCodeAt(nl - 1) === 13 ? 1 : 0) > MAX_LINE_CHARS
      ) {
        throw lineTooLong(this.path, this.lineNo);
      }
      this.emit(text, start, nl, onLine);
      start = nl + 1;
    }
    if (nul >= 0) throw binaryContent(this.path, this.lineNo + 1);
    this.rest = start === 0 ? text : text.slice(start);
    if (this.rest.length > MAX_LINE_CHARS) throw lineTooLong(this.path, this.lineNo + 1);
  }

  private emit(text: string, start: number, end: number, onLine: LineCallback): void {
    if (end > start && text.charCodeAt(end - 1) === 13) end--; // \r
    if (this.first) {
      this.first = false;
      if (end > start && text.charCodeAt(start) === 0xfeff) start++; // UTF-8 BOM
    }
    if (end <= start) return;
    // Skip whitespace-only lines without allocating when the line starts with '{' (the common case).
    if (text.charCodeAt(start) !== 123 && isBlank(text, start, end)) return;
    this.inCallback = true;
    onLine(text.slice(start, end), this.lineNo);
    this.inCallback = false;
  }
}

function isBlank(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 13 && c !== 0xfeff) return false;
  }
  return true;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
