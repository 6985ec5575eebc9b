import { describe, expect, it } from "vitest";
import { createOptimizer, type Optimizer } from "../../src/recommend/optimizer.js";
import { type Assignment, type Dimension, fromUnit, snapNumeric, toUnit } from "../../src/recommend/space.js";

const DIMS: Dimension[] = [
  { kind: "numeric", name: "x", min: 1, max: 1024, log: true, integer: true, step: null },
  { kind: "categorical", name: "c", values: ["a", "b", "c", "d"] },
  { kind: "numeric", name: "u", min: 0, max: 1, log: false, integer: false, step: 0.05 },
];

/** A smooth objective with its maximum 0 at x = 128, c = 'b', u = 0.3. */
function objective(a: Assignment): number {
  const x = Number(a["x"]);
  return -((Math.log2(x) - 7) ** 2) - (a["c"] === "b" ? 0 : 2) - 10 * (Number(a["u"]) - 0.3) ** 2;
}

const key = (a: Assignment): string => JSON.stringify([a["x"], a["c"], a["u"]]);

/** Trials until a suggestion scores within 0.3 of the optimum (or the budget). */
function trialsToNearOptimum(opt: Optimizer, budget: number, batch: number): number {
  for (let t = 0; t < budget; t += batch) {
    const asked = opt.ask(batch, []);
    for (const [i, a] of asked.entries()) {
      const y = objective(a);
      if (y > -0.3) return t + i + 1;
      opt.tell(a, [y]);
    }
  }
  return budget;
}

describe("optimizers", () => {
  it("suggest only legal values, and the same seed gives the same suggestions", () => {
    for (const algorithm of ["random", "bayesian"] as const) {
      const run = () => {
        const opt = createOptimizer(algorithm, { dimensions: DIMS, seed: 3, keyOf: key, trials: 20 });
        const out: Assignment[] = [];
        for (let i = 0; i < 5; i++) {
          const batch = opt.ask(4, []);
          for (const a of batch) opt.tell(a, [objective(a)]);
          out.push(...batch);
        }
        return out;
      };
      const a = run();
      expect(run()).toEqual(a);
      for (const s of a) {
        expect(Number.isInteger(s["x"])).toBe(true);
        expect(Number(s["x"])).toBeGreaterThanOrEqual(1);
        expect(Number(s["x"])).toBeLessThanOrEqual(1024);
        expect(["a", "b", "c", "d"]).toContain(s["c"]);
        expect(Math.abs(Number(s["u"]) * 20 - Math.round(Number(s["u"]) * 20))).toBeLessThan(1e-9);
      }
    }
  });

  it("TPE reaches the optimum in fewer trials than random search, over 12 seeds", () => {
    let tpe = 0;
    let random = 0;
    for (let seed = 0; seed < 12; seed++) {
      const opts = { dimensions: DIMS, seed, keyOf: key, trials: 120 };
      tpe += trialsToNearOptimum(createOptimizer("bayesian", opts), 120, 4);
      random += trialsToNearOptimum(createOptimizer("random", opts), 120, 4);
    }
    expect(tpe).toBeLessThan(random * 0.75);
  });

  it("avoids repeating a configuration it has seen while unseen ones remain", () => {
    const dims: Dimension[] = [{ kind: "categorical", name: "c", values: [1, 2, 3, 4, 5] }];
    for (const algorithm of ["random", "bayesian"] as const) {
      const opt = createOptimizer(algorithm, {
        dimensions: dims,
        seed: 1,
        keyOf: (a) => String(a["c"]),
        trials: 5,
      });
      const seen = new Set<unknown>();
      for (let i = 0; i < 5; i++) {
        const [a] = opt.ask(1, []);
        seen.add(a["c"]);
        opt.tell(a, [Number(a["c"])]);
      }
      expect(seen.size).toBe(5);
    }
  });

  it("counts failed candidates (null outcomes) as worst without breaking the model", () => {
    const opt = createOptimizer("bayesian", { dimensions: DIMS, seed: 5, keyOf: key, trials: 30 });
    for (let i = 0; i < 30; i++) {
      const [a] = opt.ask(1, []);
      opt.tell(a, Number(a["x"]) > 512 ? null : [objective(a)]);
    }
    const [next] = opt.ask(1, []);
    expect(Number(next["x"])).toBeLessThanOrEqual(1024);
  });
});

describe("search space", () => {
  it("maps log ranges through the unit interval and snaps stepped and integer values", () => {
    const log = DIMS[0] as Extract<Dimension, { kind: "numeric" }>;
    expect(toUnit(log, 32)).toBeCloseTo(0.5, 12);
    expect(fromUnit(log, 0.5)).toBe(32);
    const stepped = DIMS[2] as Extract<Dimension, { kind: "numeric" }>;
    expect(snapNumeric(stepped, 0.3249)).toBe(0.3);
    expect(snapNumeric(stepped, 1.7)).toBe(1);
    expect(snapNumeric({ ...stepped, min: 0, max: 0.95, step: 0.1 }, 0.99)).toBe(0.9);
  });
});
