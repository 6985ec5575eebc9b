/**
 * A Mooncake trace repeated to `rows` rows, each copy one hour after the previous: the
 * deterministic 1 M-request input of `npm run bench -- --with-1m` and bench/memory.ts.
 */
import { createWriteStream, readFileSync } from "node:fs";

export async function writeRepeatedTrace(source: string, path: string, rows: number): Promise<void> {
  const lines = readFileSync(source, "utf8").trimEnd().split("\n");
  const out = createWriteStream(path);
  let buf = "";
  for (let n = 0; n < rows; n++) {
    const row = JSON.parse(lines[n % lines.length]);
    row.timestamp += Math.floor(n / lines.length) * 3_600_000;
    buf += `${JSON.stringify(row)}\n`;
    if (buf.length > 1 << 20) {
      out.write(buf);
      buf = "";
    }
  }
  out.write(buf);
  await new Promise<void>((res) => out.end(res));
}
