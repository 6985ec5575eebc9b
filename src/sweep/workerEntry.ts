/**
 * Where a worker's main module is and how to start Node for it. The same code runs from the
 * TypeScript sources (tests, `node --import tsx`) and from the compiled `dist/` (the CLI): the
 * worker module is a `.ts` or a `.js` file respectively, and only the sources need tsx's loader.
 */
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

export interface WorkerLaunch {
  readonly modulePath: string;
  readonly execArgv: readonly string[];
}

/**
 * How to start the worker module `name` (without extension) that lies next to the module at
 * `selfUrl` (the caller's `import.meta.url`, or a folder URL ending in `/`): `name.ts` through tsx
 * from the sources, `name.js` from `dist/` or the bundled CLI's folder.
 */
export function workerLaunch(selfUrl: string, name: string): WorkerLaunch {
  const fromSources = new URL(selfUrl).pathname.endsWith(".ts");
  const modulePath = fileURLToPath(new URL(fromSources ? `./${name}.ts` : `./${name}.js`, selfUrl));
  if (!fromSources) return { modulePath, execArgv: [] };
  // Resolved from this file rather than the cwd, so a sweep started from any directory finds tsx.
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
  return { modulePath, execArgv: ["--import", tsx] };
}
