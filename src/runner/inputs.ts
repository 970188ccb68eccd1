/** A run's inputs: `--input k=v` strings turned into the declared types, defaults applied, unknown ones refused. */
import type { Playbook } from '../playbook/schema.js';
import { StepError, type Json } from './types.js';

export function coerceInputs(pb: Playbook, given: Record<string, unknown>): Json {
  const decls = pb.inputs ?? {};
  const out: Json = {};
  for (const k of Object.keys(given)) {
    if (!(k in decls))
      throw new StepError(`unknown input \`${k}\` (declared: ${Object.keys(decls).join(', ') || 'none'})`);
  }
  // Every missing one at once, each with its type (and, alone, what it is), not one per attempt.
  const missing = Object.entries(decls).filter(
    ([name, d]) => given[name] === undefined && d.default === undefined && d.required,
  );
  if (missing.length) {
    const named = missing.map(([name, d]) => `\`${name}\` (${d.type})`);
    const only = missing.length === 1 ? missing[0]?.[1].description : undefined;
    throw new StepError(
      missing.length === 1
        ? `input ${named[0]} is required${only ? `: ${only}` : ''}`
        : `inputs ${named.join(', ')} are required`,
    );
  }
  for (const [name, decl] of Object.entries(decls)) {
    let v = given[name];
    if (v === undefined) {
      if (decl.default === undefined) continue;
      v = decl.default;
    }
    if (typeof v === 'string' && decl.type !== 'string') {
      try {
        if (decl.type === 'integer' || decl.type === 'number') {
          const n = v.trim() === '' ? NaN : Number(v);
          if (!Number.isFinite(n)) throw new Error('not a number');
          v = n;
        } else v = JSON.parse(v);
      } catch {
        const json = decl.type === 'array' || decl.type === 'object';
        const example = decl.type === 'array' ? `'${name}=["a","b"]'` : `'${name}={"k":"v"}'`;
        throw new StepError(
          json
            ? `input \`${name}\` is an ${decl.type}: pass it as JSON, e.g. --input ${example} (got ${JSON.stringify(v)})`
            : `input \`${name}\` is not a valid ${decl.type}: ${JSON.stringify(v)}`,
        );
      }
    }
    const ok =
      (decl.type === 'string' && typeof v === 'string') ||
      (decl.type === 'integer' && Number.isInteger(v)) ||
      (decl.type === 'number' && typeof v === 'number' && Number.isFinite(v)) ||
      (decl.type === 'boolean' && typeof v === 'boolean') ||
      (decl.type === 'array' && Array.isArray(v)) ||
      (decl.type === 'object' && v !== null && typeof v === 'object' && !Array.isArray(v));
    if (!ok) throw new StepError(`input \`${name}\` must be of type ${decl.type}, got ${JSON.stringify(v)}`);
    if (decl.enum && !decl.enum.some((e) => JSON.stringify(e) === JSON.stringify(v))) {
      throw new StepError(
        `input \`${name}\` must be one of ${decl.enum.map((e) => JSON.stringify(e)).join(', ')}`,
      );
    }
    out[name] = v;
  }
  return out;
}
