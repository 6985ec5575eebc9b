/**
 * Numbers as the reference's console output prints them (Python's `f"{v:,.2f}"`), apart from the
 * table renderer so that callers printing a number (the fleet block, compare, estimate) do not
 * load cli-table3 (start-up, docs/performance.md).
 */
const NA = "N/A";

function groupThousands(digits: string): string {
  let out = "";
  const head = digits.length % 3;
  if (head > 0) out = digits.slice(0, head);
  for (let i = head; i < digits.length; i += 3) out += (out.length > 0 ? "," : "") + digits.slice(i, i + 3);
  return out;
}

/**
 * Formats like Python's `f"{v:,.2f}"`: thousands separators, exactly two decimals, correct rounding
 * of the exact binary value with ties to even, `-0.00` for negative values that round to zero,
 * `nan` / `inf` / `-inf`; `null`/`undefined` → `N/A`. Locale-independent.
 */
export function formatNumber(value: number | null | undefined): string {
  if (value == null) return NA;
  if (Number.isNaN(value)) return "nan";
  const negative = value < 0 || Object.is(value, -0);
  const a = Math.abs(value);
  if (a === Number.POSITIVE_INFINITY) return negative ? "-inf" : "inf";
  let intDigits: string;
  let frac: string;
  if (a >= 1e21) {
    // Integral (≥ 2^53): BigInt gives the exact decimal expansion.
    intDigits = BigInt(a).toString();
    frac = "00";
  } else {
    const whole = Math.floor(a);
    const eighths = (a - whole) * 8; // exact: the subtraction and the scaling by 8 do not round
    if (Number.isInteger(eighths) && eighths % 2 === 1) {
      // Exact tie at the third decimal (x.125, x.375, x.625, x.875): round half to even like Python
      // (Number#toFixed would round these away from zero).
      intDigits = BigInt(whole).toString();
      frac = ["12", "38", "62", "88"][(eighths - 1) / 2];
    } else {
      const fixed = a.toFixed(2);
      const dot = fixed.indexOf(".");
      intDigits = fixed.slice(0, dot);
      frac = fixed.slice(dot + 1);
    }
  }
  return (negative ? "-" : "") + groupThousands(intDigits) + "." + frac;
}

/** A count with thousands separators and no decimals (`formatNumber` without its `.00`). */
export function formatCount(value: number): string {
  return formatNumber(Math.round(value)).replace(/\.00$/, "");
}
