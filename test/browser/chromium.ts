/**
 * The Chromium that the HTML report's browser test drives, found without system packages, in this
 * order:
 *
 * 1. `FLEETSIM_CHROMIUM`: a Chromium or Chrome binary (an override);
 * 2. the headless Chromium that the `@sparticuz/chromium` devDependency ships inside its npm package
 *    (Linux x64; no download at install time), decompressed once into
 *    `node_modules/.cache/fleetsim-chromium/<version>/`;
 * 3. a system Chromium or Chrome on the usual paths, as a last resort (other platforms).
 *
 * When none is found `findChromium` throws, saying what to do: the browser test fails, it is never
 * skipped. The test launches it with Playwright's own arguments: the package's recommended ones
 * are for AWS Lambda (a single process, web security off) and are not needed elsewhere.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

export interface FoundChromium {
  readonly executablePath: string;
  /** Where it came from, for messages: `FLEETSIM_CHROMIUM`, `@sparticuz/chromium <version>` or `system`. */
  readonly source: string;
}

const ROOT = join(import.meta.dirname, "..", "..");
const CACHE = join(ROOT, "node_modules", ".cache", "fleetsim-chromium");
const PACKAGE = "@sparticuz/chromium";
/** A decompression left unfinished this long ago was interrupted: its directory is removed. */
const STALE_MS = 10 * 60 * 1000;

const SYSTEM_CHROMIUM = [
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
  "/usr/bin/google-chrome",
  "/usr/bin/google-chrome-stable",
  "/Applications/Chromium.app/Contents/MacOS/Chromium",
  "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
];

export async function findChromium(env: NodeJS.ProcessEnv = process.env): Promise<FoundChromium> {
  const override = env["FLEETSIM_CHROMIUM"];
  if (override !== undefined && override !== "") {
    if (!existsSync(override)) {
      throw new Error(`FLEETSIM_CHROMIUM=${override}: no such file (unset it to use ${PACKAGE})`);
    }
    return { executablePath: override, source: "FLEETSIM_CHROMIUM" };
  }
  const bundled = process.platform === "linux" && process.arch === "x64" ? await bundledChromium() : null;
  if (bundled !== null) return bundled;
  const system = SYSTEM_CHROMIUM.find((p) => existsSync(p));
  if (system !== undefined) return { executablePath: system, source: "system" };
  throw new Error(
    "no Chromium for the HTML report's browser test: " +
      (process.platform === "linux" && process.arch === "x64"
        ? `the ${PACKAGE} devDependency is not installed (run \`npm ci\`), `
        : `${PACKAGE} ships Linux x64 only, `) +
      `and none of ${SYSTEM_CHROMIUM.join(", ")} exists. ` +
      "Point FLEETSIM_CHROMIUM at a Chromium or Chrome binary.",
  );
}

/** The package's Chromium, decompressed into the cache on first use; null when not installed. */
async function bundledChromium(): Promise<FoundChromium | null> {
  const packageDir = installedPackageDir();
  if (packageDir === null) return null;
  const { version } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as {
    version: string;
  };
  const source = `${PACKAGE} ${version}`;
  const dir = join(CACHE, version);
  const executablePath = join(dir, "chromium");
  if (existsSync(executablePath)) return { executablePath, source };

  mkdirSync(CACHE, { recursive: true });
  removeStaleDecompressions();
  // executablePath() decompresses the binary, its fonts and SwiftShader into os.tmpdir() (/tmp,
  // shared by every checkout, written in place): point it at a private directory, then rename that
  // into place, so a concurrent or interrupted run never leaves a half-written binary behind.
  const { default: chromium } = await import("@sparticuz/chromium");
  const staging = mkdtempSync(join(CACHE, `${version}.partial-`));
  const saved = process.env["TMPDIR"];
  process.env["TMPDIR"] = staging;
  let decompressed: string;
  try {
    decompressed = await chromium.executablePath();
  } finally {
    if (saved === undefined) delete process.env["TMPDIR"];
    else process.env["TMPDIR"] = saved;
  }
  if (decompressed !== join(staging, "chromium")) {
    rmSync(staging, { recursive: true, force: true });
    throw new Error(`${source}: decompressed to ${decompressed}, expected ${join(staging, "chromium")}`);
  }
  try {
    renameSync(staging, dir);
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    // Another run finished first: use its copy.
    if (!existsSync(executablePath)) throw err;
  }
  return { executablePath, source };
}

function installedPackageDir(): string | null {
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve(PACKAGE);
  } catch {
    return null;
  }
  // The entry point lies below the package directory (build/cjs/index.cjs).
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === PACKAGE
    ) {
      return dir;
    }
  }
  return null;
}

function removeStaleDecompressions(): void {
  for (const name of readdirSync(CACHE)) {
    const path = join(CACHE, name);
    if (name.includes(".partial-") && Date.now() - statSync(path).mtimeMs > STALE_MS) {
      rmSync(path, { recursive: true, force: true });
    }
  }
}
