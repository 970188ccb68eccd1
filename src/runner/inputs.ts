/**
 * A run's inputs: turned into the declared types (text, as `--input k=v` gives it, is read as the type), defaults
 * applied, unknown ones refused, each value held to its declaration's constraints (pattern, minimum, items,
 * uniqueItems…: playbook/input-constraints.ts). A value its input's type does not take is one problem (InputMismatch) that each
 * caller words for where the value came from: a command-line flag, a JSON body, a field of the console's form.
 */
import { inputBreach, ofType } from '../playbook/input-constraints.js';
import type { Playbook } from '../playbook/schema.js';
import { StepError, type Json } from './types.js';

export type InputType = NonNullable<Playbook['inputs']>[string]['type'];

/** An input given a value its declared type does not take. */
export interface InputMismatch {
  /** The input's name. */
  input: string;
  /** Its declared type. */
  type: InputType;
  /** What it was given: the text itself when `unread`, else the value (read from text, or given typed). */
  got: unknown;
  /** `got` is text that does not read as `type` at all: not JSON for an array or an object, not a number. */
  unread: boolean;
  /** `got` is text, not read as `type` at all: the caller gives each value as its type (InputWording.typed). */
  quoted?: true;
}

/** The words for a mismatch, as the caller's user gives inputs. */
export type MismatchWording = (m: InputMismatch) => string;

/** A required input with no default that a run was not given. */
export interface MissingInput {
  name: string;
  type: InputType;
}

/**
 * How the caller's user gives inputs, said in its refusals: the words for a value its type does not take, and how
 * to give the required inputs a run lacks (`give them with --input ...`), said after they are named. Each place
 * a run starts has its own: `fleetbook run` (flags), the daemon's HTTP API (a JSON body), the console (its form).
 */
export interface InputWording {
  mismatch: MismatchWording;
  /** How to give `missing` (one or more), a clause starting lowercase; none: they are only named. */
  missing?: (missing: MissingInput[]) => string;
  /**
   * The caller's user gives each value as its type (a JSON body): text for an input of another type is refused
   * (a mismatch, `quoted`), not read as that type as `--input`'s text is. Unset: text is read.
   */
  typed?: true;
}

/** An example of a value of each type that is written as JSON. */
export const JSON_EXAMPLE: Partial<Record<InputType, string>> = { array: '["a","b"]', object: '{"k":"v"}' };

/**
 * The mismatch said of a value given as data (a JSON body, a test case): the input, its type, what it got, and for
 * text that is no array or object, how one is written.
 */
export const describeMismatch: MismatchWording = ({ input, type, got, unread, quoted }) => {
  const example = JSON_EXAMPLE[type];
  if (quoted)
    return `input \`${input}\` is ${A_TYPE[type]}: give it as ${AS_JSON[type]}, not in quotes (got ${JSON.stringify(got)})`;
  if (unread && example)
    return `input \`${input}\` is an ${type}: give it as a JSON ${type}, e.g. ${example} (got ${JSON.stringify(got)})`;
  const takes = TEXT_TAKES[type];
  if (unread && takes) return `input \`${input}\` is ${takes} (got ${JSON.stringify(got)})`;
  return unread
    ? `input \`${input}\` is not a valid ${type}: ${JSON.stringify(got)}`
    : `input \`${input}\` must be of type ${type}, got ${JSON.stringify(got)}`;
};

/** A value of each type, in words: `an integer`. */
const A_TYPE: Record<InputType, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean',
  array: 'an array',
  object: 'an object',
};

/** How a JSON body gives a value of each type but string. */
const AS_JSON: Record<InputType, string> = {
  string: 'a JSON string',
  integer: 'a JSON number',
  number: 'a JSON number',
  boolean: 'JSON true or false',
  array: `a JSON array, e.g. ${JSON_EXAMPLE.array}`,
  object: `a JSON object, e.g. ${JSON_EXAMPLE.object}`,
};

/** Inputs given as data, where the caller cannot say how (a test case, a scheduled or a resumed run). */
const DATA_WORDING: InputWording = { mismatch: describeMismatch };

/** What stands for a value of each type in a how-to: not a value to copy. */
export const PLACEHOLDER: Record<InputType, string> = {
  string: '...',
  integer: '...',
  number: '...',
  boolean: '...',
  array: '[...]',
  object: '{...}',
};

/** `them` of several inputs, `it` of one. */
export const pronoun = (missing: readonly unknown[]): string => (missing.length === 1 ? 'it' : 'them');

/**
 * The inputs of a JSON body (the daemon's `POST /playbooks/{name}/runs`): a value as JSON, a string quoted. JSON
 * has numbers, booleans, arrays and objects, so a string for an input of another type is refused, not read: it is
 * most often a template that quoted its placeholder, as `"dryRun": "true"` in the same body is refused.
 */
export const BODY_WORDING: InputWording = {
  typed: true,
  mismatch: describeMismatch,
  missing: (missing) =>
    `give ${pronoun(missing)} in the JSON body: {"inputs": {${missing
      .map(({ name, type }) => `${JSON.stringify(name)}: ${type === 'string' ? '"..."' : PLACEHOLDER[type]}`)
      .join(', ')}}}`,
};

/** The inputs of a playbook test's case (`fleetbook test`): under its `inputs:`, as YAML. */
export const CASE_WORDING: InputWording = {
  mismatch: describeMismatch,
  missing: (missing) =>
    `give ${pronoun(missing)} under the case's \`inputs:\`, e.g. \`inputs: { ${missing
      .map(({ name, type }) => `${name}: ${PLACEHOLDER[type]}`)
      .join(', ')} }\``,
};

/** What text a number or a boolean input takes, said when it is given other text. */
const TEXT_TAKES: Partial<Record<InputType, string>> = {
  number: 'a number: give it in decimal, e.g. 12, -3 or 0.5',
  integer: 'an integer: give it in decimal, e.g. 12 or -3',
  boolean: 'a boolean: give true or false',
};

/**
 * A number as JSON writes one, leading zeros allowed (`007`): `Number` alone also reads `0x10` as 16, ` 5` as 5
 * and `Infinity`, none of which a user means as a decimal number.
 */
const DECIMAL = /^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

/**
 * The inputs of a run of `pb` from those `given`, or a StepError saying what is wrong with them; a mismatch, and
 * how to give a missing input, are said in the words of `word`.
 */
export function coerceInputs(
  pb: Playbook,
  given: Record<string, unknown>,
  word: InputWording = DATA_WORDING,
): Json {
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
    const how = word.missing?.(missing.map(([name, d]) => ({ name, type: d.type })));
    const said =
      missing.length === 1 ? `input ${named[0]} is required` : `inputs ${named.join(', ')} are required`;
    throw new StepError(`${said}${only || how ? ': ' : ''}${clauses(only, how)}`);
  }
  const mismatch = (m: InputMismatch) => new StepError(word.mismatch(m));
  for (const [name, decl] of Object.entries(decls)) {
    let v = given[name];
    if (v === undefined) {
      if (decl.default === undefined) continue;
      v = decl.default;
    }
    if (typeof v === 'string' && decl.type !== 'string') {
      // A default is the playbook's own, read as ever; only a value given is the caller's to type.
      if (word.typed && given[name] !== undefined)
        throw mismatch({ input: name, type: decl.type, got: v, unread: false, quoted: true });
      const read = readAs(decl.type, v);
      if (!read.ok) throw mismatch({ input: name, type: decl.type, got: v, unread: true });
      v = read.value;
    }
    const ok = ofType(decl.type, v);
    if (!ok) throw mismatch({ input: name, type: decl.type, got: v, unread: false });
    // Its enum too: the first constraint inputBreach holds.
    const breach = inputBreach(name, decl, v);
    if (breach) throw new StepError(breach);
    out[name] = v;
  }
  return out;
}

/**
 * What a lone missing input is (its description), then how to give it: a description that ends a sentence is
 * followed by another, one that does not by a clause.
 */
function clauses(what: string | undefined, how: string | undefined): string {
  if (!what || !how) return what || how || '';
  return /[.!?]$/.test(what) ? `${what} ${how[0]?.toUpperCase()}${how.slice(1)}` : `${what}; ${how}`;
}

/** Text read as a value of `type`: a number, or JSON. */
function readAs(type: InputType, text: string): { ok: true; value: unknown } | { ok: false } {
  if (type === 'integer' || type === 'number') {
    const n = DECIMAL.test(text) ? Number(text) : NaN;
    return Number.isFinite(n) ? { ok: true, value: n } : { ok: false };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}
