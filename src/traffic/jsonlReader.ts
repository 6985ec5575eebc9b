/**
 * Streaming line reader for JSONL traces, plain or gzip (detected by the magic bytes 1f 8b, not the
 * extension; multi-member gzip is handled by zlib). Memory is bounded by the chunk size plus the
 * longest line: the file is never held as one string.
 */
import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { StringDecoder } from "node:string_decoder";
import { createGunzip } from "node:zlib";
import { TraceError } from "./traceError.js";

/** Receives each non-blank line (without `\n` / `\r\n`) and its 1-based physical line number. */
export type LineCallback = (line: string, lineNo: number) => void;

const CHUNK = 1 << 20;

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

export async function openTraceStream(path: string): Promise<TraceStream> {
  const gzip = await isGzipFile(path);
  const source = createReadStream(path, { highWaterMark: CHUNK });
  const close = (): void => {
    source.destroy();
  };
  if (!gzip) return { stream: source, gzip, close };
  const gunzip = createGunzip({ chunkSize: 256 * 1024 });
  source.on("error", (err) => gunzip.destroy(err));
  return { stream: source.pipe(gunzip), gzip, close };
}

/**
 * Calls `onLine` synchronously for every non-blank line of `path`. Errors thrown by `onLine` propagate
 * unchanged (the stream is closed); I/O and gzip errors become TraceError with line 0.
 */
export async function readJsonlLines(path: string, onLine: LineCallback): Promise<void> {
  const { stream, gzip, close } = await openTraceStream(path);
  const decoder = new StringDecoder("utf8");
  let rest = "";
  let lineNo = 0;
  let first = true;

  const emitFrom = (text: string): void => {
    let start = 0;
    for (;;) {
      const nl = text.indexOf("\n", start);
      if (nl < 0) break;
      lineNo++;
      emit(text, start, nl);
      start = nl + 1;
    }
    rest = start === 0 ? text : text.slice(start);
  };
  const emit = (text: string, start: number, end: number): void => {
    if (end > start && text.charCodeAt(end - 1) === 13) end--; // \r
    if (first) {
      first = false;
      if (end > start && text.charCodeAt(start) === 0xfeff) start++; // UTF-8 BOM
    }
    if (end <= start) return;
    // Skip whitespace-only lines without allocating when the line starts with '{' (the common case).
    if (text.charCodeAt(start) !== 123 && isBlank(text, start, end)) return;
    inCallback = true;
    onLine(text.slice(start, end), lineNo);
    inCallback = false;
  };

  let inCallback = false;
  try {
    for await (const chunk of stream) {
      const decoded = decoder.write(chunk);
      emitFrom(rest.length === 0 ? decoded : rest + decoded);
    }
  } catch (err) {
    if (inCallback || err instanceof TraceError) throw err;
    throw new TraceError(
      path,
      0,
      `${gzip ? "cannot decompress" : "cannot read"} trace file: ${errorText(err)}`,
    );
  } finally {
    close();
  }
  const tail = rest + decoder.end();
  if (tail.length > 0) {
    lineNo++;
    emit(tail, 0, tail.length);
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
