/**
 * `--stack` and `--online` as the reference's `aisimulate predict` takes them (`ai-dynamo/aisimulate@3942c28:python/aisimulate/src/aisimulate/main.py`):
 * the default stack is `engine`, the one that ships with AISimulate; `--stack dynamo` adds the
 * `router` and `planner` sections (seed 000: "A `planner` section requires `--stack dynamo`; the
 * default `engine` stack rejects it as an unknown section"). Neither stack runs online:
 * "`aisimulate predict --stack dynamo` runs offline only, so `--online` is rejected", and the
 * engine stack rejects it too.
 */
import type { Stack } from "../config/runSpec.js";

export const DEFAULT_STACK: Stack = "engine";

export const STACK_HELP = "execution stack: engine (fixed round-robin pool) or dynamo (router and Planner)";

/** The message of `predict --online` (exit 2). */
export function onlineRefusal(stack: Stack): string {
  return (
    `--online is not supported: --stack ${stack} replays offline only, in virtual time ` +
    "(no wall-clock pacing); remove --online"
  );
}
