/**
 * A reader that closes stdout early (`fleetsim schema --prediction | head -c 200`) ends the CLI
 * quietly with exit 0, not an unhandled EPIPE stack trace. A real shell pipe (node's own stdio
 * pipes are sockets with a buffer that holds the whole schema).
 */
import { describe, expect, it } from "vitest";
import { runProcess } from "../helpers/process.js";

describe("stdout closed by its reader", () => {
  it("schema --prediction | head -c 200: exit 0, nothing on stderr", async () => {
    const node = JSON.stringify(process.execPath);
    const r = await runProcess([
      "bash",
      "-c",
      `set -o pipefail; ${node} --import tsx src/cli/bin.ts schema --prediction | head -c 200 >/dev/null`,
    ]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
  }, 30_000);
});
