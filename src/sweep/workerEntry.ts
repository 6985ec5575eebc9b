/**
 * Where the worker's main module is and how to start Node for it. The same code runs from the
 * TypeScript sources (tests, `node --import tsx`) and from the compiled `dist/` (the CLI): next to
 * this file is `worker.ts` or `worker.js` respectively, and only the sources need tsx's loader.
 */
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

export interface WorkerLaunch {
  readonly modulePath: string;
  readonly execArgv: readonly string[];
}

export function workerLaunch(selfUrl: string = import.meta.url): WorkerLaunch {
  const fromSources = new URL(selfUrl).pathname.endsWith(".ts");
  const modulePath = fileURLToPath(new URL(fromSources ? "./worker.ts" : "./worker.js", selfUrl));
  if (!fromSources) return { modulePath, execArgv: [] };
  // Resolved from this file rather than the cwd, so a sweep started from any directory finds tsx.
  const tsx = pathToFileURL(createRequire(selfUrl).resolve("tsx")).href;
  return { modulePath, execArgv: ["--import", tsx] };
}
