/**
 * Every citation in the repository points at something a clone can follow. Comments and docs
 * used to cite the team's private research notes (`aisimulate.md §2.2`, `mocker.md §1.3`, a
 * `planner.md` with numbered sections, `../shared/reference/…`), which a clone does not have;
 * they now name a public source or a page of docs/. This test keeps it that way. It scans
 * src/, test/, bench/, scripts/, docs/ and README.md and fails, listing file:line, on:
 *
 * (a) a private note named as a source: `aisimulate.md`, `mocker.md`, `peers.md`,
 *     `ecosystem.md`, `demand.md`, `planner.md` not preceded by a path (`docs/planner.md` is
 *     this repository's page), or `shared/reference`;
 * (b) `docs/<name>.md` that is not a file of this repository;
 * (c) a section of a page that the page does not have, in the three forms used:
 *     `docs/x.md "Heading"` (the heading's text, or its start), `docs/x.md §7` / `§7–§10`
 *     (a numbered heading `7.`), `docs/x.md §Word` (a heading that starts with the word), and
 *     `docs/x.md#anchor` (GitHub's slug of a heading);
 * (d) a public citation in the form `` `owner/repo@ref:path` `` (ref a commit of at least 7 hex
 *     digits or a release tag) that lacks the owner/repo or the path, or an `` `owner/repo@ref` ``
 *     not followed by its path (`` `owner/repo@ref`, `path` ``).
 *
 * The checker is pure (`checkLine`); the unit cases below pin each rule on a good and a bad line.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const ROOTS = ["src", "test", "bench", "scripts", "docs", "README.md"];
const TEXT = /\.(ts|tsx|mts|cts|js|mjs|cjs|md|ya?ml|sh)$/;
/** This file names the forbidden forms on purpose (its doc comment and unit cases). */
const SELF = "test/code/citations.test.ts";

/** What the checker needs to know about docs/: whether a page exists and its headings. */
interface DocsIndex {
  exists(name: string): boolean;
  headings(name: string): readonly string[];
}

const NOTE = /(?<![\w/.-])(aisimulate|mocker|peers|ecosystem|demand|planner)\.md\b/g;
const SHARED_REFERENCE = /shared\/reference/;
const DOC_REF = /(?<![\w/.:@-])docs\/([\w-]+)\.md(?:#([\w-]+)| "([^"]+)"| ?(§[^\s,;)]+))?/g;
const SPAN = /`([^`\s]+)`/g;
const CITATION = /^[A-Za-z0-9][\w.-]*\/[\w.-]+@([\w.+-]+):(\S+)$/;
const REPO_AT_REF = /^[A-Za-z0-9][\w.-]*\/[\w.-]+@([\w.+-]+)$/;
const REF = /^(?:[0-9a-f]{7,40}|v?\d[\w.+-]*)$/;

/** A heading's text as compared: lower case, without markdown emphasis, spaces collapsed. */
function normal(text: string): string {
  return text.replace(/[`*_]/g, "").replace(/\s+/g, " ").trim().toLowerCase();
}

/** GitHub's anchor of a heading. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function sectionProblem(name: string, section: string, headings: readonly string[]): string | null {
  if (section.startsWith("#")) {
    const anchor = section.slice(1);
    return headings.some((h) => slug(h) === anchor) ? null : `docs/${name}.md has no heading #${anchor}`;
  }
  if (section.startsWith("§")) {
    // `§7`, `§7–§10`, `§4-6`: numbered sections (a range names both ends); `§Word-word`: one heading.
    const wanted = (/^§\d/.test(section) ? section.split(/[–-]/) : [section])
      .map((part) => part.replace(/^§/, "").replace(/[.:]+$/, ""))
      .filter((part) => part.length > 0);
    for (const part of wanted) {
      const numbered = /^\d/.test(part);
      const found = headings.some((h) =>
        numbered
          ? new RegExp(`^${part.replace(/\./g, "\\.")}[.\\s]`).test(`${h} `)
          : normal(h).startsWith(normal(part)),
      );
      if (!found) return `docs/${name}.md has no section §${part}`;
    }
    return null;
  }
  const quoted = normal(section);
  return headings.some((h) => normal(h) === quoted || normal(h).startsWith(quoted))
    ? null
    : `docs/${name}.md has no heading "${section}"`;
}

function noteProblems(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(NOTE)) {
    out.push(`cites the private note ${m[0]}; name a public source or a section of docs/`);
  }
  if (SHARED_REFERENCE.test(line))
    out.push("cites ../shared/reference; name a public source or a section of docs/");
  return out;
}

function docProblems(line: string, docs: DocsIndex): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(DOC_REF)) {
    const name = m[1];
    if (!docs.exists(name)) {
      out.push(`docs/${name}.md does not exist`);
      continue;
    }
    const section = m[2] !== undefined ? `#${m[2]}` : (m[3] ?? m[4]);
    if (section === undefined) continue;
    const problem = sectionProblem(name, section, docs.headings(name));
    if (problem !== null) out.push(problem);
  }
  return out;
}

function citationProblems(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(SPAN)) {
    const span = m[1];
    const atRef = /^([^@:]*)@([^:]+):(.*)$/.exec(span);
    if (atRef !== null) {
      const cited = CITATION.exec(span);
      if (cited === null || !/\//.test(atRef[1])) {
        out.push(`citation \`${span}\` needs the form owner/repo@ref:path`);
      } else if (!REF.test(cited[1])) {
        out.push(`citation \`${span}\`: ref ${cited[1]} is neither a commit nor a release tag`);
      }
      continue;
    }
    if (REPO_AT_REF.test(span)) {
      const rest = line.slice((m.index ?? 0) + m[0].length);
      if (!/^,? (?:and )?`[^`\s]*[/.][^`]*`/.test(rest))
        out.push(`citation \`${span}\` lacks the path it cites`);
    }
  }
  return out;
}

/** The problems of one line, each a sentence. */
function checkLine(line: string, docs: DocsIndex): string[] {
  return [...noteProblems(line), ...docProblems(line, docs), ...citationProblems(line)];
}

/**
 * The sections of a markdown page, outside fenced code blocks: its headings, and the bold
 * lead-ins the pages also use as named sections (`**The executable.** …`, `- **Hashes** are …`).
 */
function headingsOf(markdown: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    else if (!fenced) {
      const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line) ?? /^\s*(?:[-*]\s+)?\*\*([^*]+?)[.:]?\*\*/.exec(line);
      if (h !== null) out.push(h[1]);
    }
  }
  return out;
}

function repositoryDocs(): DocsIndex {
  const cache = new Map<string, readonly string[]>();
  const path = (name: string) => join(ROOT, "docs", `${name}.md`);
  return {
    exists: (name) => existsSync(path(name)),
    headings: (name) => {
      let found = cache.get(name);
      if (found === undefined) {
        found = headingsOf(readFileSync(path(name), "utf8"));
        cache.set(name, found);
      }
      return found;
    },
  };
}

function textFiles(path: string): string[] {
  if (!existsSync(path)) return [];
  const entries = readdirSync(path, { withFileTypes: true });
  return entries.flatMap((entry) => {
    const child = join(path, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : textFiles(child);
    return TEXT.test(entry.name) ? [child] : [];
  });
}

function scanRepository(): string[] {
  const docs = repositoryDocs();
  const files = ROOTS.flatMap((root) => {
    const path = join(ROOT, root);
    return root.includes(".") ? [path] : textFiles(path);
  });
  const problems: string[] = [];
  for (const file of files) {
    const where = relative(ROOT, file);
    if (where === SELF) continue;
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        for (const problem of checkLine(line, docs)) problems.push(`${where}:${i + 1}: ${problem}`);
      });
  }
  return problems;
}

describe("the citation checker", () => {
  const docs: DocsIndex = {
    exists: (name) => name === "retune" || name === "metrics",
    headings: (name) =>
      name === "retune"
        ? ["Planner retune", "7. Scoring", "10. Report"]
        : ["Time series", "Shared-prefix groups"],
  };
  const check = (line: string) => checkLine(line, docs);

  it("passes a public citation, a page and its sections", () => {
    expect(check(" * (`ai-dynamo/dynamo@ac0be1b:lib/mocker/src/scheduler/vllm/core.rs`).")).toEqual([]);
    expect(check("`vllm-project/vllm@v0.11.0:vllm/v1/core/sched/scheduler.py`")).toEqual([]);
    expect(check("`surajssd/llm-k8s@58b61c59`, `results_serving/04_tp4_pp2_IB/`")).toEqual([]);
    expect(check('see docs/retune.md §7, docs/retune.md §7–§10 and docs/metrics.md "Time series"')).toEqual(
      [],
    );
    expect(check("docs/metrics.md §Shared-prefix groups, docs/metrics.md §Time")).toEqual([]);
    expect(check("docs/retune.md#7-scoring, docs/retune.md §7. and docs/planner.md")).toEqual([
      "docs/planner.md does not exist",
    ]);
  });

  it("fails on each private note and on ../shared/reference", () => {
    for (const note of ["aisimulate", "mocker", "peers", "ecosystem", "demand", "planner"]) {
      expect(check(`(${note}.md §1.1)`)).toHaveLength(1);
    }
    expect(check("(`../shared/reference/peers.md` §2)")).toHaveLength(1);
    expect(check("docs/retune.md and upstream lib/mocker/docs/mocker.md")).toEqual([]);
  });

  it("fails on a missing page, heading, numbered section or anchor", () => {
    expect(check("docs/nowhere.md")).toEqual(["docs/nowhere.md does not exist"]);
    expect(check('docs/metrics.md "Saturation"')).toEqual(['docs/metrics.md has no heading "Saturation"']);
    expect(check("docs/retune.md §12")).toEqual(["docs/retune.md has no section §12"]);
    expect(check("docs/retune.md §7–§11")).toEqual(["docs/retune.md has no section §11"]);
    expect(check("docs/retune.md#8-outcomes")).toEqual(["docs/retune.md has no heading #8-outcomes"]);
  });

  it("fails on a public citation without owner/repo, path or a real ref", () => {
    expect(check("`dynamo@ac0be1b:lib/mocker/src/scheduler/vllm/core.rs`")).toHaveLength(1);
    expect(check("`@ac0be1b:lib/mocker/src/scheduler/vllm/core.rs`")).toHaveLength(1);
    expect(check("`ai-dynamo/dynamo@ac0be1b:`")).toHaveLength(1);
    expect(check("(`ai-dynamo/dynamo@ac0be1b`)")).toEqual([
      "citation `ai-dynamo/dynamo@ac0be1b` lacks the path it cites",
    ]);
    expect(check("`ai-dynamo/dynamo@main:lib/mocker/src/engine.rs`")).toHaveLength(1);
  });

  it("finds GitHub anchors and headings outside code fences", () => {
    expect(slug("7. Scoring")).toBe("7-scoring");
    expect(slug("`engine.nextn` and the Planner")).toBe("enginenextn-and-the-planner");
    expect(headingsOf("# A\n```\n# not a heading\n```\n## B ##\n**C.** text\n- **D** text\n")).toEqual([
      "A",
      "B",
      "C",
      "D",
    ]);
  });
});

describe("citations in the repository", () => {
  it("name public sources and existing docs/ sections only", () => {
    expect(scanRepository()).toEqual([]);
  });
});
