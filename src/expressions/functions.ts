/**
 * The functions of playbook expressions: CEL's standard ones as cel-js has them, `matches` on RE2, and part of
 * a list (`slice` as cel-go's lists library has it, `take`, `drop`: slices.ts). The list
 * docs/playbook.md gives (a test holds the two together, and checks each example), and what a call of a name
 * that is none of them is told, or of one given more or fewer arguments than it takes.
 */

export interface CelFunction {
  name: string;
  /** An expression that calls it and type-checks. */
  example: string;
}

export const FUNCTIONS: readonly CelFunction[] = [
  { name: 'size', example: 'size(inputs) + "ab".size()' },
  { name: 'contains', example: '"imei:35".contains("35")' },
  { name: 'startsWith', example: '"imei:35".startsWith("imei")' },
  { name: 'endsWith', example: '"report.csv".endsWith(".csv")' },
  { name: 'matches', example: '"overuse-1".matches("^overuse-[0-9]+$")' },
  { name: 'indexOf', example: '"a,b".indexOf(",")' },
  { name: 'lastIndexOf', example: '"a,b,c".lastIndexOf(",")' },
  { name: 'substring', example: '"0583964556-00001".substring(0, 10)' },
  { name: 'lowerAscii', example: '"IMEI".lowerAscii()' },
  { name: 'upperAscii', example: '"imei".upperAscii()' },
  { name: 'trim', example: '" x ".trim()' },
  { name: 'split', example: '"a,b".split(",")' },
  { name: 'join', example: '["a", "b"].join(",")' },
  { name: 'slice', example: '[1, 2, 3, 4].slice(1, 3)' },
  { name: 'take', example: 'steps.devices.items.take(50)' },
  { name: 'drop', example: 'steps.devices.items.drop(50)' },
  { name: 'int', example: 'int("42")' },
  { name: 'uint', example: 'uint(42)' },
  { name: 'double', example: 'double("2.5")' },
  { name: 'string', example: 'string(42)' },
  { name: 'bool', example: 'bool("true")' },
  { name: 'bytes', example: 'bytes("a")' },
  { name: 'dyn', example: 'dyn(1)' },
  { name: 'type', example: 'type(1) == int' },
  { name: 'timestamp', example: 'timestamp("2026-01-01T00:00:00Z").getHours()' },
  { name: 'duration', example: 'duration("90m").getMinutes()' },
];

/** The macros over a list, which take a variable and expressions over each element bound to it. */
export const COMPREHENSIONS = ['map', 'filter', 'all', 'exists', 'exists_one'] as const;
/** The macros: the comprehensions, and `has`. */
export const MACROS = [...COMPREHENSIONS, 'has'] as const;

const KNOWN = new Set<string>([...FUNCTIONS.map((f) => f.name), ...MACROS]);
/** The getters of timestamps and durations (`getHours`, `getDayOfWeek`...): functions too. */
const getter = /^get[A-Z]/;

/**
 * The checker's "found no matching overload for 'list.slice(int, int)'" said of a name that is no function at
 * all: as that, with the functions there are. Of a function there is (the wrong arguments), undefined.
 */
export function unknownFunction(message: string): string | undefined {
  const name = /^found no matching overload for '(?:[^'(]*\.)?([A-Za-z_][A-Za-z0-9_]*)\(/.exec(message)?.[1];
  if (name === undefined || KNOWN.has(name) || getter.test(name)) return undefined;
  return (
    `\`${name}\` is not a function of playbook expressions (CEL); docs/playbook.md#functions lists those there ` +
    `are: ${FUNCTIONS.map((f) => f.name).join(', ')}, the getters of timestamps and durations (getHours...), ` +
    `and the macros ${MACROS.join(', ')}`
  );
}

/** A parameter of a function as cel-js has it registered: its name (`argN` when it was given none) and type. */
export interface Parameter {
  name: string;
  type: string;
}

/** A form of a function as cel-js has it registered: called on a receiver (`list.take(n)`) or alone (`size(x)`). */
export interface Form {
  name: string;
  receiver: boolean;
  /** The type it is called on (`google.protobuf.Duration`), for a form called on a receiver. */
  receiverType?: string;
  params: readonly Parameter[];
}

/**
 * The parameters of CEL's standard functions and macros, which cel-js registers unnamed: by name, `.name` for
 * those called on a receiver, each form's. Functions of one argument called alone take a `value`, the getters
 * of timestamps a `timezone`; a function registered with names of its own (slices.ts, regex.ts) says them.
 */
const STANDARD: Record<string, readonly string[]> = {
  '.contains': ['substring'],
  '.startsWith': ['prefix'],
  '.endsWith': ['suffix'],
  '.indexOf': ['substring', 'substring, from'],
  '.lastIndexOf': ['substring', 'substring, from'],
  '.substring': ['start', 'start, end'],
  '.split': ['separator', 'separator, limit'],
  '.join': ['separator'],
  '.map': ['variable, expression', 'variable, filter, expression'],
  '.filter': ['variable, condition'],
  '.all': ['variable, condition'],
  '.exists': ['variable, condition'],
  '.exists_one': ['variable, condition'],
  has: ['field'],
};

/** How the `n` parameters of a form of `key` (`.name` or `name`) are named in a message. */
function parameters(key: string, n: number, forms: readonly Form[]): string {
  const standard = STANDARD[key]?.find((p) => p.split(',').length === n);
  if (standard !== undefined) return standard;
  const named = forms.find((f) => f.params.length === n && f.params.every((p) => !/^arg\d+$/.test(p.name)));
  if (named) return named.params.map((p) => p.name).join(', ');
  if (n === 1 && key.startsWith('.get')) return 'timezone';
  if (n === 1 && !key.startsWith('.')) return 'value';
  return (forms.find((f) => f.params.length === n)?.params ?? []).map((p) => p.type).join(', ');
}

/** The name, the way of calling and the number of arguments of a call in cel-js's syntax tree. */
function callOf(node: unknown): { name: string; receiver: boolean; count: number } | undefined {
  const n = node as { op?: unknown; args?: unknown } | null | undefined;
  if (!n || !Array.isArray(n.args)) return undefined;
  const [name, a, b] = n.args as unknown[];
  if (typeof name !== 'string') return undefined;
  if (n.op === 'rcall' && Array.isArray(b)) return { name, receiver: true, count: b.length };
  if (n.op === 'call' && Array.isArray(a)) return { name, receiver: false, count: a.length };
  return undefined;
}

/** The receiver's type in "found no matching overload for 'google.protobuf.Duration.getHours(int)'". */
function receiverOf(message: string, name: string): string | undefined {
  const quoted = /^found no matching overload for '(.*)'$/.exec(message)?.[1];
  const at = quoted?.indexOf(`.${name}(`) ?? -1;
  return quoted !== undefined && at > 0 ? quoted.slice(0, at) : undefined;
}

/** A value of a CEL type as a message names it: `a duration`, `an int`, `a list`, `null`. */
function aValueOf(type: string): string {
  const word = type
    .replace(/<.*$/, '')
    .replace(/^google\.protobuf\./, '')
    .toLowerCase();
  return word === 'null' ? word : `${/^[aeiou]/.test(word) ? 'an' : 'a'} ${word}`;
}

/**
 * The checker's or the evaluation's "found no matching overload for 'google.protobuf.Duration.getDayOfWeek()'"
 * for `call` (its node), when the getter it calls is one only values of other types have: as that, with the
 * types it applies to and the getters the value's own type has (a duration's are a timestamp's time getters).
 */
export function wrongReceiver(message: string, call: unknown, forms: readonly Form[]): string | undefined {
  const c = callOf(call);
  if (!c?.receiver || !getter.test(c.name)) return undefined;
  // Of a value whose type is not known (dyn), the arguments are what is wrong.
  const on = receiverOf(message, c.name);
  const of = forms.filter((f) => f.name === c.name && f.receiver && f.receiverType !== undefined);
  if (on === undefined || on === 'dyn' || !of.length || of.some((f) => f.receiverType === on))
    return undefined;
  const types = [...new Set(of.map((f) => aValueOf(f.receiverType as string)))];
  const own = [
    ...new Set(forms.filter((f) => f.receiverType === on && getter.test(f.name)).map((f) => f.name)),
  ];
  const value = aValueOf(on);
  return `\`${c.name}\` applies to ${types.join(' or ')}, not ${value}; ${value} has ${own.length ? own.join(', ') : 'no getters'}`;
}

/**
 * The checker's or the evaluation's "found no matching overload" for `call` (its node), when the function it
 * calls takes another number of arguments: as that, with its parameters (`\`take\` expects 1 argument (n), got
 * 2`). Of a call with as many arguments as a form takes (of other types), undefined.
 */
export function wrongArguments(message: string, call: unknown, forms: readonly Form[]): string | undefined {
  if (!message.startsWith('found no matching overload for ')) return undefined;
  const c = callOf(call);
  if (!c) return undefined;
  let mine = forms.filter((f) => f.name === c.name && f.receiver === c.receiver);
  // Called on a value of a known type (`'google.protobuf.Duration.getHours(int)'`): the forms of that type only,
  // when it has some. The getters of a timestamp and of a duration share their names, not their arguments.
  const on = c.receiver ? receiverOf(message, c.name) : undefined;
  if (on !== undefined && mine.some((f) => f.receiverType === on))
    mine = mine.filter((f) => f.receiverType === on);
  const counts = [...new Set(mine.map((f) => f.params.length))].sort((a, b) => a - b);
  if (!counts.length || counts.includes(c.count)) return undefined;
  const key = `${c.receiver ? '.' : ''}${c.name}`;
  const expected = counts
    .map((n, i) =>
      n === 0
        ? 'no arguments'
        : `${n}${i === 0 ? ` argument${n === 1 ? '' : 's'}` : ''} (${parameters(key, n, mine)})`,
    )
    .join(' or ');
  return `\`${c.name}\` expects ${expected}, got ${c.count}`;
}
