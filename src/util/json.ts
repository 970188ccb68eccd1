/** JSON as parsed: what its objects are, and how to tell one from an array or a scalar. */

/** A JSON object. */
type JsonObject = Record<string, unknown>;

/** Whether `v` is a JSON object: not null, not an array. */
export const isObject = (v: unknown): v is JsonObject =>
  v !== null && typeof v === 'object' && !Array.isArray(v);
