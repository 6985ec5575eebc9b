/**
 * The interpolation core shared by both `OpPerfTables` backends: a dense N-dimensional grid
 * (N ≤ 3) of latencies over sorted measured axes, queried by nested 1-D interpolation between the
 * bracketing knots (multilinear in the chosen axis/value spaces). Holes (cells never measured)
 * are filled once at construction, so a query reads at most 2^N cells, allocates nothing and
 * costs one binary search per axis.
 */

/** What happens outside an axis' measured range. */
export type Extrapolation =
  /** Hold the edge value. */
  | "clamp"
  /** Continue the edge segment (in the axis/value space); a decreasing trend holds the edge value. */
  | "extend"
  /** Edge value × x / x_edge: linear in the work along this axis (FLOPs, bytes). */
  | "proportional"
  /** Continue the edge segment linearly in x and √value (AIC's rule for attention sequence length). */
  | "sqrt"
  /** Edge value × (x / x_edge)²: quadratic in the axis (the reference's rule for attention beyond its longest measured sequence). */
  | "quadratic";

/** Space in which values are interpolated along an axis. */
export type ValueSpace = "lin" | "log" | "sqrt";

export interface AxisRule {
  /** Interpolate in ln(x) instead of x. */
  readonly log: boolean;
  /** Interpolate ln(latency), √latency or latency along this axis. */
  readonly values: ValueSpace;
  /** Below the first measured point of the axis. */
  readonly below: Extrapolation;
  /** Above the last measured point. */
  readonly above: Extrapolation;
}

/** How one table is read: a rule per axis and the order in which its holes are filled. */
export interface GridRules {
  /** One rule per axis. */
  readonly axes: readonly AxisRule[];
  /** Axes along which holes are filled, in order (see `fillHoles`). */
  readonly fillOrder: readonly number[];
}

const CLAMP = 0;
const EXTEND = 1;
const PROPORTIONAL = 2;
const SQRT = 3;
const QUADRATIC = 4;

function modeCode(e: Extrapolation): number {
  switch (e) {
    case "clamp":
      return CLAMP;
    case "extend":
      return EXTEND;
    case "proportional":
      return PROPORTIONAL;
    case "sqrt":
      return SQRT;
    case "quadratic":
      return QUADRATIC;
  }
}

const V_LIN = 0;
const V_LOG = 1;
const V_SQRT = 2;

/**
 * One 1-D step: the value at fraction `t` of the way from v0 to v1 (t may lie outside [0, 1] when
 * extrapolating), in linear, log or √ value space.
 */
function blend(v0: number, v1: number, t: number, space: number): number {
  if (space === V_SQRT) {
    const r = Math.sqrt(v0) + t * (Math.sqrt(v1) - Math.sqrt(v0));
    return r * r;
  }
  if (space === V_LOG && v0 > 0 && v1 > 0) {
    const l0 = Math.log(v0);
    return Math.exp(l0 + t * (Math.log(v1) - l0));
  }
  const r = v0 + t * (v1 - v0);
  return Math.max(r, 0);
}

/** Largest i in [0, n-2] with kn[i] <= x (kn sorted ascending, kn[0] < x < kn[n-1]). */
function bracket(kn: Float64Array, x: number): number {
  let lo = 0;
  let hi = kn.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (kn[mid] <= x) lo = mid;
    else hi = mid;
  }
  return lo;
}

export class Grid {
  readonly dims: number;
  /** Sorted knots of each axis. */
  readonly knots: readonly Float64Array[];
  /** Row-major cells (last axis fastest), holes filled. */
  readonly values: Float64Array;
  /** 1 where the cell was measured (not filled). */
  readonly measured: Uint8Array;
  private readonly tk: Float64Array[];
  private readonly strides: Int32Array;
  private readonly logAxis: Uint8Array;
  private readonly space: Uint8Array;
  private readonly below: Uint8Array;
  private readonly above: Uint8Array;
  private readonly q = new Float64Array(3);
  /** `res[d]`: the value along axes d… of the query being answered (`rec`). */
  private readonly res = new Float64Array(4);

  /**
   * @param knots strictly increasing knots per axis (positive on log axes)
   * @param cells row-major values, `NaN` (or null) for holes
   */
  constructor(knots: readonly (readonly number[])[], cells: ArrayLike<number | null>, rules: GridRules) {
    const dims = knots.length;
    if (dims < 1 || dims > 3 || rules.axes.length !== dims) {
      throw new Error(`grid: ${dims} axes with ${rules.axes.length} rules (1 to 3 supported)`);
    }
    this.dims = dims;
    this.knots = knots.map((k) => Float64Array.from(k));
    this.strides = new Int32Array(dims);
    let size = 1;
    for (let d = dims - 1; d >= 0; d--) {
      this.strides[d] = size;
      size *= knots[d].length;
    }
    if (cells.length !== size) throw new Error(`grid: ${cells.length} cells for axes of ${size}`);
    this.logAxis = new Uint8Array(dims);
    this.space = new Uint8Array(dims);
    this.below = new Uint8Array(dims);
    this.above = new Uint8Array(dims);
    this.tk = [];
    for (let d = 0; d < dims; d++) {
      const k = this.knots[d];
      const rule = rules.axes[d];
      if (k.length === 0) throw new Error(`grid: axis ${d} is empty`);
      for (let i = 1; i < k.length; i++) {
        if (!(k[i] > k[i - 1])) throw new Error(`grid: axis ${d} is not strictly increasing`);
      }
      if (rule.log && !(k[0] > 0)) throw new Error(`grid: log axis ${d} has a knot ≤ 0`);
      this.logAxis[d] = rule.log ? 1 : 0;
      this.space[d] = rule.values === "log" ? V_LOG : rule.values === "sqrt" ? V_SQRT : V_LIN;
      this.below[d] = modeCode(rule.below);
      this.above[d] = modeCode(rule.above);
      this.tk.push(rule.log ? k.map(Math.log) : k);
    }
    this.values = new Float64Array(size);
    this.measured = new Uint8Array(size);
    let holes = 0;
    for (let i = 0; i < size; i++) {
      const v = cells[i];
      const ok = typeof v === "number" && Number.isFinite(v);
      this.values[i] = ok ? v : Number.NaN;
      this.measured[i] = ok ? 1 : 0;
      if (!ok) holes++;
    }
    // A complete grid (every decoded compact table, every cached grid) has nothing to fill: the
    // line-by-line pass would only visit every cell once per axis.
    if (holes > 0) this.fillHoles(rules.fillOrder);
  }

  /** Value at `x` on a 1-axis grid. */
  at1(x: number): number {
    this.q[0] = x;
    this.rec(0, 0);
    return this.res[0];
  }

  at2(x: number, y: number): number {
    this.q[0] = x;
    this.q[1] = y;
    this.rec(0, 0);
    return this.res[0];
  }

  at3(x: number, y: number, z: number): number {
    this.q[0] = x;
    this.q[1] = y;
    this.q[2] = z;
    this.rec(0, 0);
    return this.res[0];
  }

  /**
   * `at3(x, y, z)`, bit for bit, for a run of queries that share `x` and `y` while `z` moves (a
   * decode run: the same heads and batch, one more cached token per pass). The first two axes'
   * brackets and fractions are planned once per (x, y) and the last axis' bracket is kept between
   * queries, so a query inside it costs one blend per corner instead of three binary searches;
   * every value is computed by the same operations, in the same order, as `rec` does. Queries
   * the plan does not cover (x or y outside its measured range, a one-knot axis, z on a knot or
   * outside the kept bracket) go through `rec` unchanged.
   */
  at3Line(x: number, y: number, z: number): number {
    this.line3(x, y, z);
    return this.res[0];
  }

  /**
   * `at3Line`'s work, its value left in `res[0]`: a double returned from a call that is not
   * inlined is boxed (a heap number of garbage per decode pass), while this small wrapper is.
   */
  private line3(x: number, y: number, z: number): void {
    if (x !== this.lineX || y !== this.lineY) this.planLine(x, y);
    const q = this.q;
    if (!this.lineOk) {
      q[0] = x;
      q[1] = y;
      q[2] = z;
      this.rec(0, 0);
      return;
    }
    const kn = this.knots[2];
    const i = this.lineI2;
    if (!(i >= 0 && kn[i] < z && z < kn[i + 1])) {
      const n = kn.length;
      // A new bracket for the runs to come; this query (and any on a knot) through `rec`.
      this.lineI2 = n >= 2 && kn[0] < z && z < kn[n - 1] ? bracket(kn, z) : -1;
      q[0] = x;
      q[1] = y;
      q[2] = z;
      this.rec(0, 0);
      return;
    }
    const tk = this.tk[2];
    const t = ((this.logAxis[2] === 1 ? Math.log(z) : z) - tk[i]) / (tk[i + 1] - tk[i]);
    const space = this.space[2];
    const v = this.values;
    const o = this.lineOff;
    const a = blend(v[o[0] + i], v[o[0] + i + 1], t, space);
    const ya = this.lineTwo1
      ? blend(a, blend(v[o[1] + i], v[o[1] + i + 1], t, space), this.lineT1, this.space[1])
      : a;
    if (!this.lineTwo0) {
      this.res[0] = ya;
      return;
    }
    const b = blend(v[o[2] + i], v[o[2] + i + 1], t, space);
    const yb = this.lineTwo1
      ? blend(b, blend(v[o[3] + i], v[o[3] + i + 1], t, space), this.lineT1, this.space[1])
      : b;
    this.res[0] = blend(ya, yb, this.lineT0, this.space[0]);
  }

  /** The plan of `at3Line` for (x, y): the row offsets of the (up to four) corners along z. */
  private planLine(x: number, y: number): void {
    this.lineX = x;
    this.lineY = y;
    this.lineI2 = -1;
    this.lineOk = false;
    if (this.dims !== 3 || this.knots[2].length < 2) return;
    // `inner` leaves its fraction in fields: read them after each axis.
    const i0 = this.inner(0, x);
    this.lineTwo0 = this.innerTwo;
    this.lineT0 = this.innerT;
    const i1 = this.inner(1, y);
    this.lineTwo1 = this.innerTwo;
    this.lineT1 = this.innerT;
    if (i0 < 0 || i1 < 0) return;
    this.lineOk = true;
    const s0 = this.strides[0];
    const s1 = this.strides[1];
    const o = this.lineOff;
    o[0] = i0 * s0 + i1 * s1;
    o[1] = o[0] + s1;
    o[2] = o[0] + s0;
    o[3] = o[2] + s1;
  }

  /**
   * Where `rec` reads axis `d` for `x` when `x` lies within the measured knots: the lower knot's
   * index (−1 otherwise), with `innerTwo` (interpolated between it and the next, rather than
   * read on a knot) and `innerT` (the fraction, computed as `rec` computes it).
   */
  private inner(d: number, x: number): number {
    const kn = this.knots[d];
    const n = kn.length;
    if (n < 2 || !(kn[0] <= x && x <= kn[n - 1])) return -1;
    this.innerTwo = false;
    this.innerT = 0;
    if (x === kn[0]) return 0;
    if (x === kn[n - 1]) return n - 1;
    const i = bracket(kn, x);
    if (x === kn[i]) return i;
    const tk = this.tk[d];
    this.innerTwo = true;
    this.innerT = ((this.logAxis[d] === 1 ? Math.log(x) : x) - tk[i]) / (tk[i + 1] - tk[i]);
    return i;
  }

  private lineX = Number.NaN;
  private lineY = Number.NaN;
  private lineOk = false;
  private lineTwo0 = false;
  private lineTwo1 = false;
  private lineT0 = 0;
  private lineT1 = 0;
  private lineI2 = -1;
  private readonly lineOff = new Int32Array(4);
  private innerTwo = false;
  private innerT = 0;

  /** The value of the sub-grid of axes after `d` at `off` into `res[d + 1]`. */
  private child(d: number, off: number): void {
    if (d === this.dims - 1) this.res[d + 1] = this.values[off];
    else this.rec(d + 1, off);
  }

  /**
   * The value along axes `d…` of the query `q` at `off` into `res[d]`. Results pass through `res`,
   * not return values: a double returned from this recursion (never inlined) was a heap number
   * per level, the replay's largest source of garbage (docs/performance.md).
   */
  private rec(d: number, off: number): void {
    const res = this.res;
    const kn = this.knots[d];
    const n = kn.length;
    const x = this.q[d];
    const st = this.strides[d];
    if (n === 1) {
      this.child(d, off);
      const v = res[d + 1];
      if ((x > kn[0] && this.above[d] === PROPORTIONAL) || (x < kn[0] && this.below[d] === PROPORTIONAL)) {
        res[d] = (v * x) / kn[0];
        return;
      }
      res[d] = v;
      return;
    }
    let i: number;
    let mode = -1;
    if (x <= kn[0]) {
      if (x === kn[0]) {
        this.child(d, off);
        res[d] = res[d + 1];
        return;
      }
      mode = this.below[d];
      i = 0;
    } else if (x >= kn[n - 1]) {
      if (x === kn[n - 1]) {
        this.child(d, off + (n - 1) * st);
        res[d] = res[d + 1];
        return;
      }
      mode = this.above[d];
      i = n - 2;
    } else {
      i = bracket(kn, x);
      if (x === kn[i]) {
        this.child(d, off + i * st);
        res[d] = res[d + 1];
        return;
      }
    }
    if (mode === CLAMP || mode === PROPORTIONAL || mode === QUADRATIC) {
      const e = x < kn[0] ? 0 : n - 1;
      this.child(d, off + e * st);
      const v = res[d + 1];
      const r = x / kn[e];
      res[d] = mode === CLAMP ? v : mode === PROPORTIONAL ? v * r : v * r * r;
      return;
    }
    this.child(d, off + i * st);
    const v0 = res[d + 1];
    this.child(d, off + (i + 1) * st);
    const v1 = res[d + 1];
    if (mode !== -1 && v1 < v0) {
      res[d] = x < kn[0] ? v0 : v1;
      return;
    }
    if (mode === SQRT) {
      res[d] = blend(v0, v1, (x - kn[i]) / (kn[i + 1] - kn[i]), V_SQRT);
      return;
    }
    const tk = this.tk[d];
    const tx = this.logAxis[d] === 1 ? Math.log(x) : x;
    res[d] = blend(v0, v1, (tx - tk[i]) / (tk[i + 1] - tk[i]), this.space[d]);
  }

  /**
   * Fills holes line by line along each axis of `order` in turn (a filled cell counts as measured
   * for later axes): between two measured knots by the axis' interpolation, above the last one by
   * its extrapolation rule (`clamp` becomes `extend`: continue the last segment), below the first
   * one by holding the first value. This mirrors AIConfigurator's load-time
   * `extrapolate_data_grid`, which completes ragged grids before any query.
   */
  private fillHoles(order: readonly number[]): void {
    const vals = this.values;
    const size = vals.length;
    for (const axis of order) {
      const n = this.knots[axis].length;
      const st = this.strides[axis];
      const kn = this.knots[axis];
      const tk = this.tk[axis];
      const above = this.above[axis];
      const space = this.space[axis];
      const present: number[] = [];
      for (let base = 0; base < size; base++) {
        if (Math.floor(base / st) % n !== 0) continue;
        present.length = 0;
        for (let j = 0; j < n; j++) if (!Number.isNaN(vals[base + j * st])) present.push(j);
        if (present.length === 0 || present.length === n) continue;
        const fills: number[] = [];
        for (let j = 0; j < n; j++) {
          if (!Number.isNaN(vals[base + j * st])) continue;
          let p = 0;
          while (p < present.length && present[p] < j) p++;
          let v: number;
          if (p === 0) {
            v = vals[base + present[0] * st];
          } else if (p < present.length) {
            const a = present[p - 1];
            const b = present[p];
            const t = (tk[j] - tk[a]) / (tk[b] - tk[a]);
            v = blend(vals[base + a * st], vals[base + b * st], t, space);
          } else {
            const b = present[p - 1];
            const vb = vals[base + b * st];
            if (above === PROPORTIONAL) {
              v = (vb * kn[j]) / kn[b];
            } else if (above === QUADRATIC) {
              v = vb * (kn[j] / kn[b]) ** 2;
            } else if (present.length === 1) {
              v = vb;
            } else {
              const a = present[p - 2];
              const va = vals[base + a * st];
              const sq = above === SQRT;
              const t = sq ? (kn[j] - kn[a]) / (kn[b] - kn[a]) : (tk[j] - tk[a]) / (tk[b] - tk[a]);
              v = vb < va ? vb : blend(va, vb, t, sq ? V_SQRT : space);
            }
          }
          fills.push(j, v);
        }
        for (let f = 0; f < fills.length; f += 2) vals[base + fills[f] * st] = fills[f + 1];
      }
    }
    for (let i = 0; i < size; i++) {
      if (Number.isNaN(vals[i]))
        throw new Error("grid: holes remain after filling; add an axis to fillOrder");
    }
  }
}
