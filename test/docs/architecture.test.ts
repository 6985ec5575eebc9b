/**
 * docs/architecture.md's module sections, the layer order of .dependency-cruiser.cjs (`LAYERS`, the
 * one place it is written) and the folders of src/ name the same folders in the same order, so
 * the page cannot drift from the layering CI enforces.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");

/** The `LAYERS` array of .dependency-cruiser.cjs, read from its text (the config exports only rules). */
function layers(): string[][] {
  const text = readFileSync(join(ROOT, ".dependency-cruiser.cjs"), "utf8");
  const body = text.slice(
    text.indexOf("const LAYERS = ["),
    text.indexOf("\n];", text.indexOf("const LAYERS = [")),
  );
  return [...body.matchAll(/^\s*\[([^\]]*)\]/gm)].map((m) =>
    [...m[1].matchAll(/"([^"]+)"/g)].map((n) => n[1]),
  );
}
const LAYERS = layers();

function tableFolders(): string[] {
  const doc = readFileSync(join(ROOT, "docs/architecture.md"), "utf8");
  const section = doc.slice(doc.indexOf("## Modules"), doc.indexOf("## Decisions"));
  return [...section.matchAll(/^### `([a-z]+)\/`/gm)].map((m) => m[1]);
}

describe("docs/architecture.md and the layer order", () => {
  it("LAYERS lists every folder of src/ once", () => {
    const folders = readdirSync(join(ROOT, "src"), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
    const listed = LAYERS.flat().filter((name) => !name.endsWith(".ts"));
    expect([...listed].sort()).toEqual(folders);
    expect(new Set(listed).size).toBe(listed.length);
  });

  it("the module sections name the folders in layer order, bottom first", () => {
    expect(tableFolders()).toEqual(LAYERS.flat().filter((name) => !name.endsWith(".ts")));
  });
});
