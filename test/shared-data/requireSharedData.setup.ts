// vitest globalSetup of `npm run test:shared`: without the project data folder beside the
// repository every test here would fail on its own; fail the run once, saying what is missing.
import { existsSync } from "node:fs";
import { REQUIRED, SHARED } from "./data.js";

export default function setup(): void {
  const missing = REQUIRED.filter((p) => !existsSync(p));
  if (missing.length > 0) {
    throw new Error(
      `npm run test:shared needs the project data folder beside the repository (${SHARED}); missing:\n` +
        missing.map((p) => `  ${p}`).join("\n") +
        "\n`npm test` runs without it; these tests are the ones whose point is the full data.",
    );
  }
}
