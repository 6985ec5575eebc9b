#!/usr/bin/env node
// The `fleetsim` executable: only wires the CLI to the process. `npm run build` bundles it, with
// everything it imports, into dist/cli/bin.js (scripts/build-cli.mjs; docs/cli.md "The executable").
import { fileGridStore, setGridStore } from "../hardware/gridCache.js";
import { cacheBuild } from "./codeCache.js";
import { ExitCode } from "./exitCodes.js";
import { runCli } from "./main.js";

// Run from the bundle with its code cache on: built timing grids are kept beside it, under the
// same build key (hardware/gridCache.ts).
const build = cacheBuild();
if (build !== null) setGridStore(fileGridStore(build.dir, build.key));

// A reader that closes the pipe early (`fleetsim schema | head`) is not an error: stop quietly
// with the exit code so far, as a Unix tool stops on SIGPIPE, instead of an unhandled EPIPE
// stack trace. Anything else on the streams is still a crash.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE") throw err;
    process.exit(process.exitCode ?? ExitCode.Ok);
  });
}

runCli(
  process.argv.slice(2),
  {
    out: (s) => process.stdout.write(s),
    err: (s) => process.stderr.write(s),
  },
  { ownsProcess: true },
).then(
  (code) => {
    process.exitCode = code;
    // A supervisor timeout abandons work still under way (a start-up that outlasted its limit):
    // end the process now, as the reference's supervisor kills its execution process.
    if (code === ExitCode.SupervisorTimeout) process.exit(code);
  },
  (err: unknown) => {
    process.stderr.write(`fleetsim: internal error: ${String(err)}\n`);
    process.exitCode = ExitCode.Failure;
  },
);
