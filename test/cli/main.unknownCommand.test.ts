/**
 * An unknown command is a usage error (exit 2) also when `--help` follows it: commander answers
 * `--help` before it looks the command up, which printed the top-level help and exited 0.
 */
import { describe, expect, it } from "vitest";
import { cli } from "../helpers/cli.js";

describe("an unknown command with --help", () => {
  it.each([
    [["frobnicate", "--help"], "error: unknown command 'frobnicate'"],
    [["sweep", "frob", "-h"], "error: unknown command 'frob'"],
    [["predit", "--help"], "(Did you mean predict?)"],
  ])("%j: exit 2, the command named", async (argv, message) => {
    const r = await cli(...argv);
    expect(r.code).toBe(2);
    expect(r.err).toContain(message);
    expect(r.out).toBe("");
  });

  it.each([["calibrate", "--help"], ["sweep", "--help"], ["help"], ["--help"]])(
    "%j: a known command's help, exit 0",
    async (...argv) => {
      const r = await cli(...argv);
      expect(r.code).toBe(0);
      expect(r.out).toContain("Usage: fleetsim");
    },
  );
});
