/** The order statistics the rows give: a median, and the quartiles that say how far single rounds spread. */

/** The value at rank ⌊n·q⌋ of the `n` values of `xs` sorted (q from 0 to 1): of an even count, the upper median. */
export function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * q))] as number;
}

export const median = (xs: readonly number[]): number => quantile(xs, 0.5);

/** `12–31`: the first and third quartiles of `xs`, with `digits` decimals. */
export function quartiles(xs: readonly number[], digits = 0): string {
  return `${quantile(xs, 0.25).toFixed(digits)}–${quantile(xs, 0.75).toFixed(digits)}`;
}
