// vitest globalSetup: the run's temporary files go in one folder of their own, removed when the
// run ends. Tests, the CLI subprocesses they start and sweep workers all make their temporary
// folders under `os.tmpdir()`, which reads TMPDIR when called; forked test workers inherit the
// variable set here. Without it a full run left about two thousand folders in /tmp.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export default function setup(): () => void {
  const outer = process.env.TMPDIR;
  const dir = mkdtempSync(join(tmpdir(), "fleetsim-test-run-"));
  process.env.TMPDIR = dir;
  return () => {
    if (outer === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = outer;
    rmSync(dir, { recursive: true, force: true });
  };
}
