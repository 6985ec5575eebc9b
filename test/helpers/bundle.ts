/**
 * The bundled CLI (scripts/build-cli.mjs) built into a temporary package root that holds only
 * package.json, the bundle and the data files it reads from tsc's output (the compact op tables,
 * the report's charts asset): no node_modules, no tsc-compiled modules, so a run proves the
 * bundle finds its files through util/packageRoot.ts. The bundle's external dependencies
 * (BullMQ, ioredis: `fleetsim worker`, the Redis executor) resolve from a node_modules beside
 * the package, as in an install: `linkNodeModules` links the repository's there.
 */
import { copyFileSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { buildCli } from "../../scripts/build-cli.mjs";
import { SOURCE_ASSET } from "../../scripts/build-report-assets.mjs";
import { tempDir } from "./specs.js";

export const REPO_ROOT = join(import.meta.dirname, "..", "..");

export interface BuiltBundle {
  /** The package root. */
  readonly pkg: string;
  /** Its `dist/cli/bin.js`, the executable. */
  readonly bin: string;
}

export async function buildBundle(opts: { readonly linkNodeModules?: boolean } = {}): Promise<BuiltBundle> {
  const pkg = tempDir("fleetsim-bundle-");
  if (opts.linkNodeModules === true) symlinkSync(join(REPO_ROOT, "node_modules"), join(pkg, "node_modules"));
  copyFileSync(join(REPO_ROOT, "package.json"), join(pkg, "package.json"));
  mkdirSync(join(pkg, "dist", "hardware"), { recursive: true });
  symlinkSync(
    join(REPO_ROOT, "src", "hardware", "calibration"),
    join(pkg, "dist", "hardware", "calibration"),
  );
  mkdirSync(join(pkg, "dist", "report", "html", "generated"), { recursive: true });
  copyFileSync(SOURCE_ASSET, join(pkg, "dist", "report", "html", "generated", "echarts.min.js"));
  const bin = await buildCli({ dist: join(pkg, "dist") });
  return { pkg, bin };
}
