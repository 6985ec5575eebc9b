/**
 * Where fleetsim's own files are at run time. The same modules run from the TypeScript sources
 * (tsx: tests), from tsc's output in `dist/` (the library) and from the bundled CLI
 * (`dist/cli/bin.js` + `dist/bundle/`, written by scripts/build-cli.mjs with esbuild). In the
 * bundle a module's code lies in a chunk, so its `import.meta.url` no longer says where the
 * module was: the files that ship beside a module (the compact op tables, the report's charts
 * bundle, package.json, the sweep worker) are found through here instead.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** Replaced by `true` by the esbuild `define` of scripts/build-cli.mjs; undeclared elsewhere. */
declare const FLEETSIM_BUNDLED: boolean | undefined;

/** True in the bundled CLI, false from the sources and from tsc's output. */
export const BUNDLED: boolean = typeof FLEETSIM_BUNDLED !== "undefined" && FLEETSIM_BUNDLED === true;

/** The bundle's folder below the package root (its entries and chunks; scripts/build-cli.mjs). */
export const BUNDLE_DIR = "dist/bundle/";

let root: URL | null = null;

/**
 * The package's root folder (ends in `/`): the nearest folder above this module's code that holds
 * a package.json. Walking up works wherever the code lies — src/util/, dist/util/ or a bundle
 * chunk — and in an installed copy (node_modules/fleetsim/).
 */
export function packageRootUrl(): URL {
  if (root === null) {
    let dir = new URL(".", import.meta.url);
    while (!existsSync(new URL("package.json", dir))) {
      const parent = new URL("..", dir);
      if (parent.href === dir.href) {
        throw new Error(`fleetsim's package.json was not found above ${fileURLToPath(import.meta.url)}`);
      }
      dir = parent;
    }
    root = dir;
  }
  return root;
}

let version: string | null = null;

/** fleetsim's version, from its package.json. */
export function packageVersion(): string {
  if (version === null) {
    const pkg = JSON.parse(readFileSync(new URL("package.json", packageRootUrl()), "utf8")) as {
      version: string;
    };
    version = pkg.version;
  }
  return version;
}

/**
 * The URL of `relative` (e.g. `calibration/h200_sxm.json`) beside the module whose source lies
 * in `src/<dir>/` and whose `import.meta.url` is `moduleUrl`: next to the module from the
 * sources and from tsc's output (which ship such files beside the module), and in tsc's output
 * (`dist/<dir>/`) from the bundle, which ships beside it in the package (`npm run build` writes
 * both, so the bundle holds no second copy of the data files).
 */
export function besideModule(moduleUrl: string, dir: string, relative: string): URL {
  return BUNDLED ? new URL(`dist/${dir}/${relative}`, packageRootUrl()) : new URL(relative, moduleUrl);
}
