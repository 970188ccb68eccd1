/**
 * Text with a NUL character (U+0000), refused where it enters: none of the service's request ids or device
 * identifiers has one, and PostgreSQL's text cannot hold one (SQLite's can), so that a value kept with one
 * would be kept otherwise on each store. The callback listener and the runner's device lists refuse it alike.
 */

/** Whether `value` is a string with a NUL character. */
export const hasNul = (value: unknown): boolean => typeof value === 'string' && value.includes('\0');

/**
 * Why `value` is refused, or undefined when it is not a string with a NUL character. `field` names it at the
 * head of the message (a function of the value, called only when it is refused); `whose` says whose has none
 * ("no request id").
 */
export function nulRefusal(
  value: unknown,
  field: string | ((value: string) => string),
  whose: string,
): string | undefined {
  if (!hasNul(value)) return undefined;
  const name = typeof field === 'string' ? field : field(value as string);
  return `${name} has a NUL character (U+0000): ${whose} has one, and the PostgreSQL store cannot keep one`;
}
