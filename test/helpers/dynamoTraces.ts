/** Synthetic Dynamo request traces (dynamo.request.trace.v1) for retune tests. */

const T0 = 1_760_000_000_000;

/**
 * A Dynamo request trace of `seconds` seconds, one request every `gapMs`: prompts of 4–12 blocks of
 * 64 tokens sharing a prefix per group of 5, a recorded total time of 2 s (so none is censored by a
 * 5 s grace).
 */
export function dynamoTrace(seconds: number, gapMs = 250): string {
  const lines: string[] = [];
  for (let i = 0, t = 0; t < seconds * 1000; i++, t += gapMs) {
    const blocks = 4 + (i % 9);
    const group = Math.floor(i / 5) % 7;
    const hashes = Array.from({ length: blocks }, (_, b) => (b < 3 ? group * 1000 + b : i * 100 + b));
    lines.push(
      JSON.stringify({
        schema: "dynamo.request.trace.v1",
        event_type: "request_end",
        event_time_unix_ms: T0 + t + 2000,
        request: {
          request_id: `r-${i}`,
          request_received_ms: T0 + t,
          total_time_ms: 2000,
          output_tokens: 20 + (i % 30),
          replay: { trace_block_size: 64, input_length: blocks * 64, input_sequence_hashes: hashes },
        },
      }),
    );
  }
  return `${lines.join("\n")}\n`;
}

/** One small `request_end` row (100 tokens, 2 blocks of 64, 2 output tokens), received at `receivedMs`. */
export function dynamoRow(id: string, receivedMs: number): string {
  return JSON.stringify({
    schema: "dynamo.request.trace.v1",
    event_type: "request_end",
    event_time_unix_ms: receivedMs + 20,
    request: {
      request_id: id,
      request_received_ms: receivedMs,
      output_tokens: 2,
      replay: { trace_block_size: 64, input_length: 100, input_sequence_hashes: [1, 2] },
    },
  });
}
