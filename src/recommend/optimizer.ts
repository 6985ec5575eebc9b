/**
 * The two search strategies of `optimizer.algorithm` over one study's dimensions, both asked for
 * batches of suggestions and told each outcome (an objective vector, larger is better, or null
 * for a candidate that failed or was rejected):
 *
 * - `random`: every dimension drawn uniformly (finite ranges evenly, log ranges in log space).
 * - `bayesian`: a tree-structured Parzen estimator (TPE, Bergstra et al. 2011, as hyperopt
 *   builds it). After a random start, the observations are split into the best γ share and the
 *   rest; each dimension gets a density of either group — Gaussian kernels in the unit interval
 *   with hyperopt's neighbour bandwidths and a wide prior kernel, or smoothed counts for a
 *   categorical dimension — and of candidates drawn from the good density the one maximising
 *   l(x)/g(x) is suggested. Suggestions still running count as bad ("constant liar"), so a batch
 *   spreads out; failed candidates count as worst. Several objectives (Pareto) are scalarised per
 *   batch with random weights (Chebyshev, objectives scaled by their best value), as the
 *   reference's GP-UCB-PE does by hypervolume scalarisation.
 *
 * Both avoid suggesting a configuration already evaluated or pending (`keyOf`), drawing again up
 * to a bound; a repeat that gets through is served by the result cache. Seeded, deterministic.
 */
import { Prng } from "../util/prng.js";
import {
  type Assignment,
  type Dimension,
  fromUnit,
  type NumericDimension,
  sampleUniform,
  toUnit,
} from "./space.js";

export type Outcome = readonly number[] | null;

export interface Optimizer {
  /** `count` suggestions; `pending` are suggested but not yet told. */
  ask(count: number, pending: readonly Assignment[]): Assignment[];
  tell(assignment: Assignment, outcome: Outcome): void;
}

export interface OptimizerOptions {
  readonly dimensions: readonly Dimension[];
  readonly seed: number;
  /** The concrete configuration an assignment stands for: suggestions avoid repeating one. */
  readonly keyOf: (a: Assignment) => string;
  /** The trial budget of this study (sizes the random start of TPE). */
  readonly trials: number;
}

/** Draws per suggestion before a repeat is accepted. */
const MAX_REDRAWS = 32;

abstract class BaseOptimizer implements Optimizer {
  protected readonly rng: Prng;
  protected readonly told: { a: Assignment; outcome: Outcome }[] = [];
  private readonly seen = new Set<string>();

  constructor(protected readonly opts: OptimizerOptions) {
    this.rng = new Prng(opts.seed);
  }

  ask(count: number, pending: readonly Assignment[]): Assignment[] {
    const out: Assignment[] = [];
    const taken = new Set(this.seen);
    for (const p of pending) taken.add(this.opts.keyOf(p));
    for (let i = 0; i < count; i++) {
      const next = this.suggest([...pending, ...out], taken);
      taken.add(this.opts.keyOf(next));
      out.push(next);
    }
    return out;
  }

  tell(a: Assignment, outcome: Outcome): void {
    this.told.push({ a, outcome });
    this.seen.add(this.opts.keyOf(a));
  }

  protected abstract suggest(pending: readonly Assignment[], taken: ReadonlySet<string>): Assignment;

  protected random(taken: ReadonlySet<string>): Assignment {
    let a = this.draw();
    for (let i = 1; i < MAX_REDRAWS && taken.has(this.opts.keyOf(a)); i++) a = this.draw();
    return a;
  }

  private draw(): Assignment {
    const a: Record<string, unknown> = {};
    for (const d of this.opts.dimensions) a[d.name] = sampleUniform(d, this.rng);
    return a;
  }
}

export class RandomSearch extends BaseOptimizer {
  protected suggest(_pending: readonly Assignment[], taken: ReadonlySet<string>): Assignment {
    return this.random(taken);
  }
}

/** Share of the observations in the good group (hyperopt's γ). */
const GAMMA = 0.25;
/** Candidates drawn from l(x) per suggestion (hyperopt's n_EI_candidates). */
const CANDIDATES = 24;
/** Prior kernel weight relative to one observation. */
const PRIOR_WEIGHT = 1;

export class TpeSearch extends BaseOptimizer {
  /** Random suggestions before the model is used: a quarter of the budget, between 4 and 10. */
  private readonly startup: number;

  constructor(opts: OptimizerOptions) {
    super(opts);
    this.startup = Math.max(4, Math.min(10, Math.ceil(opts.trials / 4)));
  }

  protected suggest(pending: readonly Assignment[], taken: ReadonlySet<string>): Assignment {
    const finite = this.told.filter((t) => t.outcome !== null);
    if (this.told.length + pending.length < this.startup || finite.length === 0) return this.random(taken);
    const scores = this.scalarise();
    const observed = this.told.map((t, i) => ({ a: t.a, score: scores[i] }));
    for (const p of pending) observed.push({ a: p, score: Number.NEGATIVE_INFINITY });
    // Best first; ties keep telling order (stable sort), so the split is deterministic.
    observed.sort((x, y) => y.score - x.score);
    const nGood = Math.max(1, Math.ceil(GAMMA * observed.length));
    const good = observed.slice(0, nGood).map((o) => o.a);
    const bad = observed.slice(nGood).map((o) => o.a);
    const models = this.opts.dimensions.map((d) => ({ d, l: density(d, good), g: density(d, bad) }));

    let best: Assignment | null = null;
    let bestScore = Number.NEGATIVE_INFINITY;
    let bestFresh: Assignment | null = null;
    let bestFreshScore = Number.NEGATIVE_INFINITY;
    for (let c = 0; c < CANDIDATES * 2; c++) {
      const a: Record<string, unknown> = {};
      let ratio = 0;
      for (const { d, l, g } of models) {
        const value = l.sample(this.rng);
        a[d.name] = value;
        ratio += Math.log(l.pdf(value)) - Math.log(g.pdf(value));
      }
      if (c < CANDIDATES && ratio > bestScore) {
        best = a;
        bestScore = ratio;
      }
      if (!taken.has(this.opts.keyOf(a)) && ratio > bestFreshScore) {
        bestFresh = a;
        bestFreshScore = ratio;
      }
      if (c >= CANDIDATES - 1 && bestFresh !== null) break;
    }
    return bestFresh ?? best ?? this.random(taken);
  }

  /** One score per told outcome: the objective, or a Chebyshev scalarisation of several. */
  private scalarise(): number[] {
    const width = this.told.find((t) => t.outcome !== null)?.outcome?.length ?? 1;
    if (width === 1)
      return this.told.map((t) => (t.outcome === null ? Number.NEGATIVE_INFINITY : t.outcome[0]));
    const scale = new Array<number>(width).fill(0);
    for (const t of this.told) {
      if (t.outcome === null) continue;
      t.outcome.forEach((v, i) => {
        scale[i] = Math.max(scale[i], Math.abs(v));
      });
    }
    const w = Array.from({ length: width }, () => -Math.log(1 - this.rng.nextFloat()));
    const sum = w.reduce((s, x) => s + x, 0);
    return this.told.map((t) => {
      if (t.outcome === null) return Number.NEGATIVE_INFINITY;
      let s = Number.POSITIVE_INFINITY;
      t.outcome.forEach((v, i) => {
        s = Math.min(s, v / (scale[i] || 1) / (w[i] / sum));
      });
      return s;
    });
  }
}

/** A density over one dimension's values, with a sampler. */
interface Density {
  pdf(value: unknown): number;
  sample(rng: Prng): unknown;
}

function density(d: Dimension, points: readonly Assignment[]): Density {
  if (d.kind === "categorical") {
    const weights = d.values.map(() => PRIOR_WEIGHT / d.values.length);
    const keys = d.values.map((v) => JSON.stringify(v));
    for (const p of points) {
      const i = keys.indexOf(JSON.stringify(p[d.name]));
      if (i >= 0) weights[i] += 1;
    }
    const total = weights.reduce((s, w) => s + w, 0);
    return {
      pdf: (value) => {
        const i = keys.indexOf(JSON.stringify(value));
        return i < 0 ? 1e-12 : weights[i] / total;
      },
      sample: (rng) => {
        let r = rng.nextFloat() * total;
        for (let i = 0; i < weights.length; i++) {
          r -= weights[i];
          if (r < 0) return d.values[i];
        }
        return d.values[d.values.length - 1];
      },
    };
  }
  return parzen(
    d,
    points.map((p) => toUnit(d, Number(p[d.name]))),
  );
}

/** Gaussian kernels on [0, 1] at the points plus a prior kernel N(0.5, 1), truncated to [0, 1]. */
function parzen(d: NumericDimension, us: readonly number[]): Density {
  const mus = [...us, 0.5];
  const order = mus.map((_, i) => i).sort((a, b) => mus[a] - mus[b] || a - b);
  const sigmas = new Array<number>(mus.length).fill(1);
  // hyperopt's adaptive Parzen bandwidth: the larger gap to a neighbour (the bounds count),
  // clipped to [1 / min(100, 1 + n), 1]; the prior keeps bandwidth 1.
  const minSigma = 1 / Math.min(100, 1 + us.length);
  order.forEach((idx, k) => {
    if (idx === mus.length - 1) return;
    const left = k === 0 ? mus[idx] - 0 : mus[idx] - mus[order[k - 1]];
    const right = k === order.length - 1 ? 1 - mus[idx] : mus[order[k + 1]] - mus[idx];
    sigmas[idx] = Math.min(1, Math.max(minSigma, left, right));
  });
  const weights = mus.map((_, i) => (i === mus.length - 1 ? PRIOR_WEIGHT : 1));
  const total = weights.reduce((s, w) => s + w, 0);
  const mass = mus.map((mu, i) => normalCdf((1 - mu) / sigmas[i]) - normalCdf((0 - mu) / sigmas[i]));
  return {
    pdf: (value) => {
      // The density of the value evaluated (after snapping), so stepped values are compared fairly.
      const u = toUnit(d, Number(value));
      let p = 0;
      for (let i = 0; i < mus.length; i++) {
        const z = (u - mus[i]) / sigmas[i];
        p +=
          (weights[i] * Math.exp(-0.5 * z * z)) /
          (sigmas[i] * Math.sqrt(2 * Math.PI) * Math.max(mass[i], 1e-12));
      }
      return Math.max(p / total, 1e-12);
    },
    sample: (rng) => {
      let r = rng.nextFloat() * total;
      let i = 0;
      while (i < weights.length - 1 && r >= weights[i]) r -= weights[i++];
      let u = Number.NaN;
      for (let tries = 0; tries < 64; tries++) {
        const x = mus[i] + sigmas[i] * standardNormal(rng);
        if (x >= 0 && x <= 1) {
          u = x;
          break;
        }
      }
      if (Number.isNaN(u)) u = Math.min(1, Math.max(0, mus[i]));
      return fromUnit(d, u);
    },
  };
}

/** Box–Muller. */
function standardNormal(rng: Prng): number {
  const u1 = 1 - rng.nextFloat();
  const u2 = rng.nextFloat();
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

/** Φ(x) via erf (Abramowitz & Stegun 7.1.26, |error| < 1.5e-7). */
function normalCdf(x: number): number {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * z);
  const poly =
    t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const erf = 1 - poly * Math.exp(-z * z);
  return x >= 0 ? 0.5 * (1 + erf) : 0.5 * (1 - erf);
}

export function createOptimizer(algorithm: "bayesian" | "random", opts: OptimizerOptions): Optimizer {
  return algorithm === "random" ? new RandomSearch(opts) : new TpeSearch(opts);
}
