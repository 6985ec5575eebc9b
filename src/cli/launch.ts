#!/usr/bin/env node
// The `fleetsim` executable of the built package (dist/cli/bin.js, scripts/build-cli.mjs): runs
// the CLI bundle (dist/bundle/cli.cjs, bin.ts and everything it imports) through a V8 code cache
// (codeCache.ts; docs/cli.md "The executable"). From the sources, bin.ts is the entry.
import { fileURLToPath } from "node:url";
import { runBundle } from "./codeCache.js";

runBundle(fileURLToPath(new URL("../bundle/cli.cjs", import.meta.url)), process.argv[2]);
