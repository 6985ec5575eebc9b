/**
 * A reader that closes stdout early (`fleetsim schema --prediction | head -c 200`) ends the CLI
 * quietly with exit 0, not an unhandled EPIPE stack trace. A real shell pipe (node's own stdio
 * pipes are sockets with a buffer that holds the whole schema).
 */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";

describe("stdout closed by its reader", () => {
  it("schema --prediction | head -c 200: exit 0, nothing on stderr", async () => {
    const node = JSON.stringify(process.execPath);
    const child = spawn(
      "bash",
      [
        "-c",
        `set -o pipefail; ${node} --import tsx src/cli/bin.ts schema --prediction | head -c 200 >/dev/null`,
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(stderr).toBe("");
    expect(code).toBe(0);
  }, 30_000);
});
