/**
 * The public CEL conformance suite (cel-spec's test data, from the @bufbuild/cel-spec package) through
 * fleetbook's expression layer: the sections of plain CEL that playbooks use.
 *
 * Each case runs twice: in a plain cel-js Environment (the engine alone), and through fleetbook's wrapper
 * (`compileWith`, the wrapper of playbooks with the case's variables). The wrapper must pass every case the
 * engine passes: its integer boundary, its mixed int/double arithmetic and its conversion of results to
 * plain data must not break what CEL gets right. The cases the engine itself fails are KNOWN below, by name;
 * the test also checks that they still fail, so that the list stays exact when cel-js improves.
 *
 * A result is compared in the form each side gives it: cel-js's own values (BigInt for int, UnsignedInt for
 * uint, Type for a type), and fleetbook's plain data, where every number is a JS number, bytes are base64 and
 * a type is its name. An expected error passes when the evaluation throws.
 *
 * CONFORMANCE_REPORT=1 prints every failing case of either side, with what it gave.
 */
import { Environment } from '@marcbachmann/cel-js';
import { UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { tests } from '@bufbuild/cel-spec/testdata/conformance.js';
import type { SerializedIncrementalTestSuite } from '@bufbuild/cel-spec/testdata/tests.js';
import { expect } from 'chai';
import { compileWith } from '../../src/expressions/cel.js';

const SECTIONS = [
  'basic',
  'comparisons',
  'conversions',
  'fields',
  'integer_math',
  'fp_math',
  'lists',
  'logic',
  'macros',
  'parse',
  'string',
];

/**
 * The cases cel-js 8 fails on its own (configured as fleetbook configures it: list and map literals may mix
 * types), `section/group/name`, by what cel-js does not do. fleetbook does not promise them either.
 */
const KNOWN: Record<string, string[]> = {
  'bytes literals: non-ASCII characters as Latin-1, not UTF-8; raw bytes literals (br"...")': [
    'basic/self_eval_nonzeroish/self_eval_bytes_escape',
    'comparisons/eq_literal/eq_bytes',
    'comparisons/ne_literal/not_ne_bytes',
    'parse/bytes_literals/raw_single_quoted_escapes',
    'parse/bytes_literals/raw_double_quoted_escapes',
    'parse/bytes_literals/raw_triple_single_quoted_escapes',
    'parse/bytes_literals/raw_triple_double_quoted_escapes',
    'parse/bytes_literals/upper_raw_single_quoted_escapes',
    'parse/bytes_literals/upper_raw_double_quoted_escapes',
    'parse/bytes_literals/upper_raw_triple_single_quoted_escapes',
    'parse/bytes_literals/upper_raw_triple_double_quoted_escapes',
  ],
  'values of different types: equality, ordering and membership across int, uint and double, lists of other element types; int(uint)':
    [
      'comparisons/eq_literal/not_eq_list_length',
      'comparisons/eq_literal/eq_mixed_types',
      'comparisons/eq_literal/eq_list_elem_mixed_types',
      'comparisons/ne_literal/ne_mixed_types',
      'comparisons/lt_literal/not_lt_dyn_int_big_lossy_double',
      'comparisons/gt_literal/not_gt_dyn_big_double_int',
      'comparisons/lte_literal/lte_dyn_big_double_int',
      'comparisons/gte_literal/gte_dyn_int_big_lossy_double',
      'conversions/int/uint',
      'conversions/int/uint_zero',
      'conversions/int/uint_max_exact',
      'lists/index/zero_based_uint',
      'lists/in/uint_in_ints',
      'lists/in/uint_in_doubles',
      'lists/in/int_in_uints',
      'lists/in/double_in_uints',
      'parse/nest/funcall',
    ],
  'a double literal without a digit before the point (.99)': ['comparisons/gt_literal/not_gt_double'],
  'string(bytes) of invalid UTF-8 is not an error': ['conversions/string/bytes_invalid'],
  'a comparison on an element of an empty list literal: overlapping overloads (`[].all(e, e > 0)`)': [
    'macros/all/list_empty',
  ],
  'exists_one() over a map literal with keys and values of different types': ['macros/exists_one/map_one'],
  'an unbound variable or function is an error at check, not at run time (`x || true`)': [
    'basic/variables/unbound_is_runtime_error',
    'basic/functions/unbound_is_runtime_error',
    'parse/receiver_function_names/as',
    'parse/receiver_function_names/break',
    'parse/receiver_function_names/const',
    'parse/receiver_function_names/continue',
    'parse/receiver_function_names/else',
    'parse/receiver_function_names/for',
    'parse/receiver_function_names/function',
    'parse/receiver_function_names/if',
    'parse/receiver_function_names/import',
    'parse/receiver_function_names/let',
    'parse/receiver_function_names/loop',
    'parse/receiver_function_names/package',
    'parse/receiver_function_names/namespace',
    'parse/receiver_function_names/return',
    'parse/receiver_function_names/var',
    'parse/receiver_function_names/void',
    'parse/receiver_function_names/while',
  ],
  'a logical or conditional operand of the wrong type is an error at check, even where CEL short-circuits it':
    [
      'comparisons/eq_literal/eq_list_mixed_type_numbers',
      'comparisons/eq_literal/eq_map_mixed_type_numbers',
      'logic/conditional/mixed_type',
      'logic/AND/short_circuit_type_left',
      'logic/AND/short_circuit_type_right',
      'logic/OR/short_circuit_type_left',
      'logic/OR/short_circuit_type_right',
    ],
  'protobuf messages, wrappers and Any': [
    'parse/whitespace/new_lines',
    'parse/comments/new_line_terminated',
    'comparisons/eq_literal/eq_dyn_json_null',
    'comparisons/eq_literal/not_eq_dyn_proto2_msg_null',
    'comparisons/eq_literal/not_eq_dyn_proto3_msg_null',
    'comparisons/eq_wrapper/eq_bool',
    'comparisons/eq_wrapper/eq_bool_empty',
    'comparisons/eq_wrapper/eq_bool_not_null',
    'comparisons/eq_wrapper/eq_bool_proto2_null',
    'comparisons/eq_wrapper/eq_bool_proto3_null',
    'comparisons/eq_wrapper/eq_bytes',
    'comparisons/eq_wrapper/eq_bytes_empty',
    'comparisons/eq_wrapper/eq_bytes_not_null',
    'comparisons/eq_wrapper/eq_bytes_proto2_null',
    'comparisons/eq_wrapper/eq_bytes_proto3_null',
    'comparisons/eq_wrapper/eq_double',
    'comparisons/eq_wrapper/eq_double_empty',
    'comparisons/eq_wrapper/eq_double_not_null',
    'comparisons/eq_wrapper/eq_double_proto2_null',
    'comparisons/eq_wrapper/eq_double_proto3_null',
    'comparisons/eq_wrapper/eq_float',
    'comparisons/eq_wrapper/eq_float_empty',
    'comparisons/eq_wrapper/eq_float_not_null',
    'comparisons/eq_wrapper/eq_float_proto2_null',
    'comparisons/eq_wrapper/eq_float_proto3_null',
    'comparisons/eq_wrapper/eq_int32',
    'comparisons/eq_wrapper/eq_int32_empty',
    'comparisons/eq_wrapper/eq_int32_not_null',
    'comparisons/eq_wrapper/eq_int32_proto2_null',
    'comparisons/eq_wrapper/eq_int32_proto3_null',
    'comparisons/eq_wrapper/eq_int64',
    'comparisons/eq_wrapper/eq_int64_empty',
    'comparisons/eq_wrapper/eq_int64_not_null',
    'comparisons/eq_wrapper/eq_int64_proto2_null',
    'comparisons/eq_wrapper/eq_int64_proto3_null',
    'comparisons/eq_wrapper/eq_string',
    'comparisons/eq_wrapper/eq_string_empty',
    'comparisons/eq_wrapper/eq_string_not_null',
    'comparisons/eq_wrapper/eq_string_proto2_null',
    'comparisons/eq_wrapper/eq_string_proto3_null',
    'comparisons/eq_wrapper/eq_uint32',
    'comparisons/eq_wrapper/eq_uint32_empty',
    'comparisons/eq_wrapper/eq_uint32_not_null',
    'comparisons/eq_wrapper/eq_uint32_proto2_null',
    'comparisons/eq_wrapper/eq_uint32_proto3_null',
    'comparisons/eq_wrapper/eq_uint64',
    'comparisons/eq_wrapper/eq_uint64_empty',
    'comparisons/eq_wrapper/eq_uint64_not_null',
    'comparisons/eq_wrapper/eq_uint64_proto2_null',
    'comparisons/eq_wrapper/eq_uint64_proto3_null',
    'comparisons/eq_wrapper/eq_proto2',
    'comparisons/eq_wrapper/eq_proto3',
    'comparisons/eq_wrapper/eq_proto2_missing_fields_neq',
    'comparisons/eq_wrapper/eq_proto3_missing_fields_neq',
    'comparisons/eq_wrapper/eq_proto_nan_equal',
    'comparisons/eq_wrapper/eq_proto_different_types',
    'comparisons/eq_wrapper/eq_proto2_any_unpack_equal',
    'comparisons/eq_wrapper/eq_proto2_any_unpack_not_equal',
    'comparisons/eq_wrapper/eq_proto2_any_unpack_bytewise_fallback_not_equal',
    'comparisons/eq_wrapper/eq_proto2_any_unpack_bytewise_fallback_equal',
    'comparisons/eq_wrapper/eq_proto3_any_unpack_equal',
    'comparisons/eq_wrapper/eq_proto3_any_unpack_not_equal',
    'comparisons/eq_wrapper/eq_proto3_any_unpack_bytewise_fallback_not_equal',
    'comparisons/eq_wrapper/eq_proto3_any_unpack_bytewise_fallback_equal',
    'comparisons/ne_literal/ne_proto2',
    'comparisons/ne_literal/ne_proto3',
    'comparisons/ne_literal/ne_proto2_missing_fields_neq',
    'comparisons/ne_literal/ne_proto3_missing_fields_neq',
    'comparisons/ne_literal/ne_proto_nan_not_equal',
    'comparisons/ne_literal/ne_proto_different_types',
    'comparisons/ne_literal/ne_proto2_any_unpack',
    'comparisons/ne_literal/ne_proto2_any_unpack_bytewise_fallback',
    'comparisons/ne_literal/ne_proto3_any_unpack',
    'comparisons/ne_literal/ne_proto3_any_unpack_bytewise_fallback',
    'parse/nest/message_literal',
    'parse/repeat/select',
    'parse/repeat/message_literal',
    'parse/whitespace/spaces',
    'parse/whitespace/tabs',
    'parse/whitespace/new_pages',
    'parse/whitespace/carriage_returns',
    'parse/struct_field_names/as',
    'parse/struct_field_names/break',
    'parse/struct_field_names/const',
    'parse/struct_field_names/continue',
    'parse/struct_field_names/else',
    'parse/struct_field_names/for',
    'parse/struct_field_names/function',
    'parse/struct_field_names/if',
    'parse/struct_field_names/import',
    'parse/struct_field_names/let',
    'parse/struct_field_names/loop',
    'parse/struct_field_names/package',
    'parse/struct_field_names/namespace',
    'parse/struct_field_names/return',
    'parse/struct_field_names/var',
    'parse/struct_field_names/void',
    'parse/struct_field_names/while',
  ],
  'conversions of timestamps and durations: int(timestamp), timestamp(timestamp), duration(duration)': [
    'conversions/int/timestamp',
    'conversions/identity/duration',
    'conversions/identity/timestamp',
  ],
  'no ordering of bytes': [
    'comparisons/lt_literal/lt_bytes',
    'comparisons/lt_literal/not_lt_bytes_same',
    'comparisons/lt_literal/not_lt_bytes_width',
    'comparisons/gt_literal/gt_bytes_one',
    'comparisons/gt_literal/gt_bytes_one_to_empty',
    'comparisons/gt_literal/not_gt_bytes_sorting',
    'comparisons/lte_literal/lte_bytes_empty',
    'comparisons/lte_literal/not_lte_bytes_length',
    'comparisons/gte_literal/gte_bytes_to_empty',
    'comparisons/gte_literal/not_gte_bytes_empty_to_nonempty',
    'comparisons/gte_literal/gte_bytes_samelength',
    'comparisons/bound/bytes_gt_left_false',
  ],
  'no overflow error: int(double) out of range, -(-2^63), -2^63 / -1': [
    'conversions/int/double_int_max_range',
    'conversions/int/double_int_min_range',
    'conversions/int/double_range',
    'conversions/uint/double_uint_max_range',
    'integer_math/int64_math/int64_min_negate',
    'integer_math/int64_math/int64_min_negate_div',
  ],
  'the type of null is named `null`, not `null_type`': [
    'conversions/type/null_type',
    'conversions/type/null_type_denotation',
  ],
  'has() on a map literal': [
    'fields/map_has/has',
    'fields/map_has/has_not',
    'fields/map_has/has_empty',
    'fields/quoted_map_fields/has_field_slash',
    'fields/quoted_map_fields/has_field_dash',
    'fields/quoted_map_fields/has_field_dot',
  ],
  'quoted field names (.`content-type`)': [
    'fields/quoted_map_fields/field_access_slash',
    'fields/quoted_map_fields/field_access_dash',
    'fields/quoted_map_fields/field_access_dot',
  ],
  'qualified identifiers (`a.b.c` as one variable) and map keys CEL refuses (double, null, repeated)': [
    'fields/qualified_identifier_resolution/qualified_ident',
    'fields/qualified_identifier_resolution/map_field_select',
    'fields/qualified_identifier_resolution/qualified_identifier_resolution_unchecked',
    'fields/qualified_identifier_resolution/ident_with_longest_prefix_check',
    'fields/qualified_identifier_resolution/map_key_float',
    'fields/qualified_identifier_resolution/map_key_null',
    'fields/qualified_identifier_resolution/map_value_repeat_key',
    'fields/qualified_identifier_resolution/map_value_repeat_key_heterogeneous',
  ],
};
const KNOWN_IDS = new Set(Object.values(KNOWN).flat());

// ── the test data ───────────────────────────────────────────────────────────────────────────────

/** A cel.expr.Value in its protobuf JSON form. */
interface Value {
  nullValue?: null;
  boolValue?: boolean;
  int64Value?: string;
  uint64Value?: string;
  doubleValue?: number | string;
  stringValue?: string;
  bytesValue?: string;
  listValue?: { values?: Value[] };
  mapValue?: { entries?: { key: Value; value: Value }[] };
  typeValue?: string;
  objectValue?: unknown;
  enumValue?: unknown;
}

interface Case {
  id: string;
  expr: string;
  bindings: Record<string, Value>;
  /** The declared variables, with their CEL type where cel-js has one. */
  variables: Record<string, string>;
  value?: Value;
  evalError: boolean;
}

interface Decl {
  name: string;
  ident?: { type?: TypeJson };
}
interface TypeJson {
  primitive?: string;
  listType?: { elemType?: TypeJson };
  mapType?: { keyType?: TypeJson; valueType?: TypeJson };
  messageType?: string;
  wellKnown?: string;
  null?: null;
  dyn?: unknown;
}

const PRIMITIVES: Record<string, string> = {
  BOOL: 'bool',
  INT64: 'int',
  UINT64: 'uint',
  DOUBLE: 'double',
  STRING: 'string',
  BYTES: 'bytes',
};

/** The cel-js name of a declared type; `dyn` for what cel-js has no name for (messages, wrappers). */
function typeName(t: TypeJson | undefined): string {
  if (!t) return 'dyn';
  if (t.primitive) return PRIMITIVES[t.primitive] ?? 'dyn';
  if (t.listType) return `list<${typeName(t.listType.elemType)}>`;
  if (t.mapType) return `map<${typeName(t.mapType.keyType)}, ${typeName(t.mapType.valueType)}>`;
  return 'dyn';
}

function cases(): Map<string, Case[]> {
  const groups = new Map<string, Case[]>();
  const suites = (tests as SerializedIncrementalTestSuite).suites ?? [];
  for (const section of suites) {
    if (!SECTIONS.includes(section.name)) continue;
    for (const group of section.suites ?? []) {
      const list: Case[] = [];
      for (const t of group.tests ?? []) {
        const o = t.original as Record<string, unknown> & { name?: string; expr: string };
        const bindings: Record<string, Value> = {};
        for (const [k, v] of Object.entries((o.bindings ?? {}) as Record<string, { value: Value }>))
          bindings[k] = v.value;
        const variables: Record<string, string> = {};
        for (const d of (o.typeEnv ?? []) as Decl[]) if (d.ident) variables[d.name] = typeName(d.ident.type);
        for (const k of Object.keys(bindings)) variables[k] ??= 'dyn';
        list.push({
          id: `${section.name}/${group.name}/${o.name ?? o.expr}`,
          expr: o.expr,
          bindings,
          variables,
          ...(o.value ? { value: o.value as Value } : {}),
          evalError: o.evalError !== undefined,
        });
      }
      groups.set(`${section.name}/${group.name}`, list);
    }
  }
  return groups;
}

// ── cel-js values ───────────────────────────────────────────────────────────────────────────────

const base64 = (b: string) => new Uint8Array(Buffer.from(b, 'base64'));
const double = (d: number | string) => Number(d);
/** cel-js's class of type values (`int`, `type(x)`), which it does not export. */
const TypeClass = (new Environment().evaluate('int') as object).constructor;

/** A Value as cel-js represents it in a context. */
function native(v: Value): unknown {
  if ('nullValue' in v) return null;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.int64Value !== undefined) return BigInt(v.int64Value);
  if (v.uint64Value !== undefined) return new UnsignedInt(BigInt(v.uint64Value));
  if (v.doubleValue !== undefined) return double(v.doubleValue);
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.bytesValue !== undefined) return base64(v.bytesValue);
  if (v.listValue) return (v.listValue.values ?? []).map(native);
  if (v.mapValue) {
    const entries = (v.mapValue.entries ?? []).map((e) => [native(e.key), native(e.value)] as const);
    return entries.every(([k]) => typeof k === 'string')
      ? Object.fromEntries(entries)
      : new Map<unknown, unknown>(entries);
  }
  throw new Error(`no cel-js form for ${JSON.stringify(v)}`);
}

const sameDouble = (a: number, b: number) => (Number.isNaN(a) && Number.isNaN(b)) || a === b;
const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);

/** Whether a cel-js result is the expected Value, type included. */
function celEquals(actual: unknown, v: Value): boolean {
  if ('nullValue' in v) return actual === null;
  if (v.boolValue !== undefined) return actual === v.boolValue;
  if (v.int64Value !== undefined) return actual === BigInt(v.int64Value);
  if (v.uint64Value !== undefined)
    return actual instanceof UnsignedInt && actual.valueOf() === BigInt(v.uint64Value);
  if (v.doubleValue !== undefined)
    return typeof actual === 'number' && sameDouble(actual, double(v.doubleValue));
  if (v.stringValue !== undefined) return actual === v.stringValue;
  if (v.bytesValue !== undefined)
    return actual instanceof Uint8Array && sameBytes(actual, base64(v.bytesValue));
  if (v.typeValue !== undefined)
    return actual instanceof TypeClass && (actual as { name: string }).name === v.typeValue;
  if (v.listValue) {
    const want = v.listValue.values ?? [];
    return (
      Array.isArray(actual) && actual.length === want.length && want.every((w, i) => celEquals(actual[i], w))
    );
  }
  if (v.mapValue) {
    const want = v.mapValue.entries ?? [];
    if (actual instanceof Map)
      return (
        actual.size === want.length &&
        want.every((e) => [...actual].some(([k, x]) => celEquals(k, e.key) && celEquals(x, e.value)))
      );
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
    const keys = Object.keys(actual);
    return (
      keys.length === want.length &&
      want.every(
        (e) =>
          e.key.stringValue !== undefined &&
          Object.hasOwn(actual, e.key.stringValue) &&
          celEquals((actual as Record<string, unknown>)[e.key.stringValue], e.value),
      )
    );
  }
  return false; // a message or an enum: cel-js has neither
}

// ── fleetbook's plain values ────────────────────────────────────────────────────────────────────

/** A Value as fleetbook gives it: plain data. */
function plain(v: Value): unknown {
  if ('nullValue' in v) return null;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.int64Value !== undefined) return Number(v.int64Value);
  if (v.uint64Value !== undefined) return Number(v.uint64Value);
  if (v.doubleValue !== undefined) return double(v.doubleValue);
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.bytesValue !== undefined) return Buffer.from(v.bytesValue, 'base64').toString('base64');
  if (v.typeValue !== undefined) return v.typeValue;
  if (v.listValue) return (v.listValue.values ?? []).map(plain);
  if (v.mapValue)
    return Object.fromEntries((v.mapValue.entries ?? []).map((e) => [String(plain(e.key)), plain(e.value)]));
  return { unsupported: v };
}

function plainEquals(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return sameDouble(a, b);
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length &&
    kb.every(
      (k) =>
        Object.hasOwn(a, k) &&
        plainEquals((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
    )
  );
}

// ── the two runs ────────────────────────────────────────────────────────────────────────────────

interface Outcome {
  pass: boolean;
  got: string;
}

const show = (v: unknown): string => {
  if (v instanceof Error) return `error: ${v.message.split('\n')[0]}`;
  try {
    return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x)) ?? String(v);
  } catch {
    return String(v);
  }
};

function judge(c: Case, run: () => unknown, equals: (actual: unknown, v: Value) => boolean): Outcome {
  let result: unknown;
  try {
    result = run();
  } catch (e) {
    return { pass: c.evalError, got: show(e) };
  }
  return { pass: !c.evalError && c.value !== undefined && equals(result, c.value), got: show(result) };
}

function celjs(c: Case): Outcome {
  return judge(
    c,
    () => {
      const env = new Environment({ homogeneousAggregateLiterals: false });
      for (const [name, type] of Object.entries(c.variables)) env.registerVariable(name, type);
      const context = Object.fromEntries(Object.entries(c.bindings).map(([k, v]) => [k, native(v)]));
      return env.evaluate(c.expr, context);
    },
    celEquals,
  );
}

function fleetbook(c: Case): Outcome {
  return judge(
    c,
    () => {
      const context = Object.fromEntries(Object.entries(c.bindings).map(([k, v]) => [k, native(v)]));
      return compileWith(c.expr, Object.keys(c.variables)).evaluate(context);
    },
    (actual, v) => plainEquals(actual, plain(v)),
  );
}

// ── the tests ───────────────────────────────────────────────────────────────────────────────────

const groups = cases();

describe('the CEL conformance suite through fleetbook (cel-spec test data)', () => {
  it(`holds the ${SECTIONS.length} sections, and every KNOWN name is a case of them`, () => {
    const found = new Set([...groups.keys()].map((g) => g.split('/')[0]));
    expect([...found].sort()).to.deep.equal([...SECTIONS].sort());
    const ids = new Set([...groups.values()].flat().map((c) => c.id));
    expect([...KNOWN_IDS].filter((id) => !ids.has(id))).to.deep.equal([]);
  });

  const report = process.env.CONFORMANCE_REPORT === '1';
  for (const [group, list] of groups) {
    it(`${group}: fleetbook passes every case cel-js passes (${list.length} cases)`, () => {
      const problems: string[] = [];
      for (const c of list) {
        const engine = celjs(c);
        const ours = fleetbook(c);
        const want = c.evalError ? 'an error' : show(c.value);
        if (report && (!engine.pass || !ours.pass))
          console.log(`${c.id}\t${c.expr}\twant ${want}\tcel-js ${engine.got}\tfleetbook ${ours.got}`);
        if (KNOWN_IDS.has(c.id)) {
          if (engine.pass) problems.push(`${c.id}: cel-js passes it now; remove it from KNOWN`);
          continue;
        }
        if (!engine.pass) {
          problems.push(`${c.id}: cel-js fails \`${c.expr}\` (want ${want}, got ${engine.got}): not KNOWN`);
          continue;
        }
        if (!ours.pass) problems.push(`${c.id}: \`${c.expr}\` want ${want}, fleetbook gives ${ours.got}`);
      }
      expect(problems, problems.join('\n')).to.deep.equal([]);
    });
  }
});
