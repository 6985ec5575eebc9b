/**
 * The output directory's contract (issue 13 §1–4), in process: files are written in full or not
 * at all, a failure or a cancellation leaves the previous outputs untouched and nothing of the
 * run behind, one run holds a directory at a time, and a directory that cannot take the
 * results is refused before any work.
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  checkOutputDir,
  isFleetsimTemporary,
  LOCK_FILE,
  OutputCancelled,
  OutputDirError,
  OutputDirLock,
  writeFully,
  writeOutputs,
} from "../../src/report/outputDir.js";
import { runProcess } from "../helpers/process.js";
import { tempDir } from "../helpers/specs.js";

const files = (text: string) => [
  { name: "prediction.json", chunks: [text.slice(0, 10), text.slice(10)] },
  { name: "requests.jsonl", chunks: ["a\n", "b\n"] },
];

describe("writeOutputs", () => {
  it("resumes short writes: every byte lands", async () => {
    const dir = tempDir();
    const text = "x".repeat(10_000) + "é".repeat(100);
    // At most 7 bytes per call, as a nearly full disk may do.
    await writeOutputs(dir, files(text), false, { write: (fd, b, o, l) => writeFully7(fd, b, o, l) });
    expect(readFileSync(join(dir, "prediction.json"), "utf8")).toBe(text);
    expect(readdirSync(dir).sort()).toEqual(["prediction.json", "requests.jsonl"]);
  });

  it("a full disk (ENOSPC mid-file) throws, keeps the previous outputs and leaves nothing of the run", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "prediction.json"), "old prediction");
    writeFileSync(join(dir, "report.html"), "old report");
    let budget = 4096;
    const write = (fd: number, b: Buffer, o: number, l: number): number => {
      if (budget <= 0) {
        const e = new Error("ENOSPC: no space left on device, write") as NodeJS.ErrnoException;
        e.code = "ENOSPC";
        throw e;
      }
      const n = Math.min(l, budget);
      budget -= n;
      return writeFully7(fd, b, o, n);
    };
    await expect(writeOutputs(dir, files("y".repeat(100_000)), true, { write })).rejects.toThrow(
      /could not write the results to .*: no space left on device; nothing of this run was kept/,
    );
    expect(readFileSync(join(dir, "prediction.json"), "utf8")).toBe("old prediction");
    expect(readFileSync(join(dir, "report.html"), "utf8")).toBe("old report");
    expect(readdirSync(dir).sort()).toEqual(["prediction.json", "report.html"]);
  });

  it("a write that makes no progress is an error, never a truncated file (/dev/full)", () => {
    const fd = openSync("/dev/full", "w");
    try {
      expect(() => writeFully(fd, Buffer.from("hello"))).toThrow(/ENOSPC|no space/);
    } finally {
      closeSync(fd);
    }
    expect(() => writeFully(0, Buffer.from("x"), () => 0)).toThrow(/no space left on device/);
  });

  it("a cancellation before the commit rolls back: previous outputs untouched, no temporaries", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "prediction.json"), "old");
    await expect(
      writeOutputs(dir, files("new content"), true, { cancelled: () => true }),
    ).rejects.toBeInstanceOf(OutputCancelled);
    expect(readdirSync(dir)).toEqual(["prediction.json"]);
    expect(readFileSync(join(dir, "prediction.json"), "utf8")).toBe("old");
  });

  it("with --overwrite replaces only fleetsim's files and removes stale temporaries of killed runs", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "prediction.json"), "old");
    writeFileSync(join(dir, "notes.txt"), "mine");
    writeFileSync(join(dir, ".prediction.json.4242.tmp"), "half");
    mkdirSync(join(dir, ".fleetsim-stage.4243"));
    writeFileSync(join(dir, ".fleetsim-stage.4243", "report.html"), "half");
    await writeOutputs(dir, [{ name: "prediction.json", chunks: ["new"] }], true);
    expect(readdirSync(dir).sort()).toEqual(["notes.txt", "prediction.json"]);
    expect(readFileSync(join(dir, "prediction.json"), "utf8")).toBe("new");
  });
});

describe("checkOutputDir", () => {
  it("fleetsim's own temporaries and lock do not make a directory 'not empty'", () => {
    const dir = tempDir();
    writeFileSync(join(dir, ".prediction.json.77.tmp"), "");
    writeFileSync(join(dir, LOCK_FILE), "1\n");
    expect(() => checkOutputDir(dir, false)).not.toThrow();
    writeFileSync(join(dir, "x"), "");
    expect(() => checkOutputDir(dir, false)).toThrow(/is not empty; pass --overwrite/);
    expect(isFleetsimTemporary(".fleetsim-old.12")).toBe(true);
    expect(isFleetsimTemporary("prediction.json")).toBe(false);
  });

  it("refuses an empty path, a file, a known output that is a directory, and an unwritable parent", () => {
    expect(() => checkOutputDir("", false)).toThrow(/must not be empty/);
    const dir = tempDir();
    writeFileSync(join(dir, "file"), "");
    expect(() => checkOutputDir(join(dir, "file"), false)).toThrow(/exists and is not a directory/);
    expect(() => checkOutputDir(join(dir, "file", "sub"), false)).toThrow(OutputDirError);
    mkdirSync(join(dir, "out", "prediction.json"), { recursive: true });
    expect(() => checkOutputDir(join(dir, "out"), true)).toThrow(/prediction\.json is a directory/);
    expect(() => checkOutputDir("/proc/self/nonexistent-dir", false)).toThrow(OutputDirError);
  });
});

describe("OutputDirLock", () => {
  it("one run per directory: a second lock fails with exit-2 message; released, it can be taken again", () => {
    const dir = join(tempDir(), "out");
    const a = OutputDirLock.acquire(dir);
    expect(existsSync(join(dir, LOCK_FILE))).toBe(true);
    expect(() => OutputDirLock.acquire(dir)).toThrow(/is in use by another fleetsim run \(pid \d+\)/);
    a.release();
    // The run created the directory and left it empty: it is removed with the lock.
    expect(existsSync(dir)).toBe(false);
    OutputDirLock.acquire(dir).release();
  });

  it("a lock file that names no process is never taken for stale (a run may be writing it)", () => {
    const dir = tempDir();
    writeFileSync(join(dir, LOCK_FILE), "");
    expect(() => OutputDirLock.acquire(dir)).toThrow(/holds a lock file that names no process .*remove it/);
    expect(readdirSync(dir)).toEqual([LOCK_FILE]);
  });

  it("eight processes racing for one directory: exactly one holds it at a time", async () => {
    const dir = tempDir();
    const script = join(tempDir(), "race.mts");
    const module = new URL("../../src/report/outputDir.ts", import.meta.url).pathname;
    // Every process leaves a marker once it has tried; the holder keeps the lock until all eight
    // have tried, so a slow start (a loaded machine) cannot make a second winner after a release.
    writeFileSync(
      script,
      `import { existsSync, readdirSync, writeFileSync, mkdirSync } from "node:fs";
import { OutputDirLock } from ${JSON.stringify(module)};
const [markers] = process.argv.slice(2);
let lock = null;
try { lock = OutputDirLock.acquire(${JSON.stringify(join(dir, "out"))}); } catch {}
mkdirSync(markers, { recursive: true });
writeFileSync(markers + "/" + process.pid, "");
if (lock === null) process.exit(2);
const deadline = Date.now() + 45_000;
while (readdirSync(markers).length < 8 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
lock.release();
`,
    );
    for (let round = 0; round < 2; round++) {
      const markers = join(dir, `markers-${round}`);
      const codes = await Promise.all(
        Array.from(
          { length: 8 },
          async () => (await runProcess([process.execPath, "--import", "tsx", script, markers])).code,
        ),
      );
      expect(readdirSync(markers).length).toBe(8);
      expect(codes.filter((c) => c === 0).length).toBe(1);
      expect(codes.filter((c) => c === 2).length).toBe(7);
    }
  }, 60_000);

  it("a stale lock (its process is gone) is taken over", () => {
    const dir = tempDir();
    // pid 2^22 + 1 is above Linux's pid_max default range.
    writeFileSync(join(dir, LOCK_FILE), `${4_194_305}\n`);
    const lock = OutputDirLock.acquire(dir);
    expect(readFileSync(join(dir, LOCK_FILE), "utf8").trim()).toBe(String(process.pid));
    lock.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    expect(existsSync(dir)).toBe(true); // it existed before: kept
  });
});

/** writeSync of at most 7 bytes. */
function writeFully7(fd: number, b: Buffer, o: number, l: number): number {
  const n = Math.min(7, l);
  writeFully(fd, b.subarray(o, o + n));
  return n;
}
