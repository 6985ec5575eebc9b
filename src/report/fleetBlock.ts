/**
 * The fleet block `predict` prints below the AIPerf table (docs/metrics.md "Fleet block"): what
 * the fleet cost and delivered. The table above it stays as the reference prints it.
 */
import { MIN_GROWTH } from "../metrics/saturation.js";
import type { Prediction } from "../output/prediction.js";
import { type FleetFacts, fleetFactsOfPrediction, type HardwareFact } from "./fleet.js";
import { formatCount, formatNumber } from "./formatNumber.js";

export const FLEET_TITLE = "Fleet (fleetsim)";

function gpus(n: number): string {
  return Number.isInteger(n) ? formatCount(n) : formatNumber(n);
}

/** `1:02:03` of virtual time. */
function clock(ms: number): string {
  const total = Math.round(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return `${h}:${String(m).padStart(2, "0")}:${String(s).padStart(2, "0")}`;
}

function minutes(ms: number): string {
  return ms >= 120_000 ? `${Number((ms / 60_000).toFixed(1))} min` : `${Number((ms / 1000).toFixed(1))} s`;
}

/** `Cost (USD): 0.42 (2.79 per 1M output tokens, 0.0026 per good request)` (docs/cost.md). */
export function costLine(c: NonNullable<FleetFacts["cost"]>): string {
  const per: string[] = [];
  if (c.perMillionOutputTokens !== null) per.push(`${usd(c.perMillionOutputTokens)} per 1M output tokens`);
  if (c.perGoodRequest !== null) per.push(`${usd(c.perGoodRequest)} per good request`);
  return `Cost (USD): ${usd(c.usd)}${per.length > 0 ? ` (${per.join(", ")})` : ""}`;
}

/**
 * `Hardware: h200_sxm (calibrated: measured op tables)`, or `estimated: datasheet roofline over
 * h200_sxm's measured op tables` for a system without tables of its own (docs/perf-tables.md).
 */
export function hardwareLine(hardware: readonly HardwareFact[]): string {
  return `Hardware: ${hardware.map((h) => `${h.gpu} (${h.tier}: ${h.basis})`).join(", ")}`;
}

/** Dollars with two decimals, or four significant digits below one cent. */
export function usd(x: number): string {
  return Math.abs(x) >= 0.01 || x === 0 ? formatNumber(x) : Number(x.toPrecision(4)).toString();
}

/**
 * The block of the document `predict` just built (`fleetFactsOfPrediction`: not parsed again),
 * its lines joined with `\n`, no trailing newline. A document read from a file: `fleetLines` of
 * `fleetFactsOf` its tolerant reading.
 */
export function renderFleetBlock(prediction: Prediction): string {
  return fleetLines(fleetFactsOfPrediction(prediction)).join("\n");
}

export function fleetLines(f: FleetFacts): string[] {
  const lines = [FLEET_TITLE];
  let hours = `GPU Hours: ${formatNumber(f.gpuHours)}`;
  if (f.prefillGpuHours !== null && f.decodeGpuHours !== null) {
    hours += ` (prefill ${formatNumber(f.prefillGpuHours)}, decode ${formatNumber(f.decodeGpuHours)})`;
  }
  lines.push(hours);
  if (f.hardware.length > 0) lines.push(hardwareLine(f.hardware));
  if (f.calibration !== null) {
    lines.push(
      `Calibration Profile: ${f.calibration.profile} (client overhead ${formatNumber(f.calibration.requestMs)} ms per request)`,
    );
  }
  if (f.kvOffload !== null) {
    const k = f.kvOffload;
    lines.push(
      `KV Host Offload: ${formatCount(k.loads)} loads, ${formatCount(k.loadedTokens)} tokens from host ` +
        `(mean load ${formatNumber(k.meanLoadMs)} ms), ${formatCount(k.evicted)} blocks evicted`,
    );
  }
  if (f.diskOffload !== null) {
    const d = f.diskOffload;
    lines.push(
      `KV Disk Offload: ${formatCount(d.reads)} reads, ${formatNumber(d.readBytes / 1e9)} GB per GPU from disk ` +
        `(${formatCount(d.hits)} of ${formatCount(d.probes)} block lookups hit), ${formatCount(d.resident)} blocks resident`,
    );
  }
  if (f.cost !== null) lines.push(costLine(f.cost));
  const provisioned = [
    `peak ${f.peakGpus === null ? "N/A" : gpus(f.peakGpus)}`,
    `mean ${formatNumber(f.meanGpus)}`,
  ];
  if (f.budget !== null) provisioned.push(`budget ${gpus(f.budget)}`);
  lines.push(`Provisioned GPUs: ${provisioned.join(", ")}`);
  if (f.provisionedAfterLastMs !== null) {
    lines.push(
      "Note: mean GPUs is the reference's avg_gpu (GPU-hours over duration_ms, which ends at the last " +
        `completion); workers stayed provisioned about ${minutes(f.provisionedAfterLastMs)} after it, so the mean ` +
        "exceeds the peak",
    );
  }
  if (f.overBudget !== null) {
    const o = f.overBudget;
    lines.push(
      `Warning: provisioned GPUs exceed the budget of ${gpus(o.budget)} (planner.max_num_gpus) from ` +
        `${clock(o.firstAtMs)} of virtual time, for ${minutes(o.durationMs)} in all, peak ${gpus(o.peakGpus)}; ` +
        "starting and draining workers count",
    );
  }
  if (f.slaText === null && f.goodRequests === null) {
    lines.push("Goodput (requests/sec): N/A (no evaluation.sla)");
    lines.push("SLA Attainment: N/A (no evaluation.sla)");
  } else {
    lines.push(`Goodput (requests/sec): ${formatNumber(f.goodputRps)}`);
    const share = f.slaAttainment === null ? "N/A" : `${formatNumber(f.slaAttainment * 100)}%`;
    const of =
      f.goodRequests === null || f.numRequests === null
        ? ""
        : ` (${formatCount(f.goodRequests)} of ${formatCount(f.numRequests)} requests within ${f.slaText ?? "the SLA"})`;
    lines.push(`SLA Attainment: ${share}${of}`);
  }
  if (f.scaling === null) lines.push("Scaling Events: none (no Planner)");
  else {
    let text = `Scaling Events: ${formatCount(f.scaling.total)} (${formatCount(f.scaling.up)} up, ${formatCount(f.scaling.down)} down)`;
    if (f.scaling.recommended !== null) {
      text += `; advisory: ${formatCount(f.scaling.recommended)} recommended, none applied`;
    }
    lines.push(text);
  }
  if (f.saturation !== null) {
    const s = f.saturation;
    const timedOut = f.timedOut ?? 0;
    lines.push(
      timedOut > 0 && s.growth <= MIN_GROWTH
        ? // Timeouts bound the queue of an overloaded fleet (docs/metrics.md "Saturation").
          `Note: the run is saturated: its clients gave up on ${formatCount(timedOut)} requests ` +
            `(client.timeout_seconds), which held the queue at ${formatCount(s.backlogAtLastArrival)} requests ` +
            "waiting or running at the last arrival: the fleet cannot keep up with this traffic"
        : `Note: the run is saturated: the queue was still growing at the last arrival (+${formatCount(s.growth)} ` +
            `requests over the last ${minutes(s.windowMs)} of arrivals; ${formatCount(s.backlogAtLastArrival)} ` +
            "requests waiting or running then): the fleet cannot keep up with this traffic, so latencies " +
            "depend on how long the trace is",
    );
  }
  if (f.notCompleted !== null && f.notCompleted > 0 && f.numRequests !== null) {
    const timedOut =
      f.timedOut !== null && f.timedOut > 0
        ? `; ${formatCount(f.timedOut)} timed out by the client (client.timeout_seconds)`
        : "";
    lines.push(
      `Not Completed: ${formatCount(f.notCompleted)} of ${formatCount(f.numRequests)} requests ` +
        `(rejected: prompt at max_model_len or larger than a worker's KV cache${timedOut}; or unfinished when the run stopped)`,
    );
  }
  return lines;
}
