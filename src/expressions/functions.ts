/**
 * The functions of playbook expressions: CEL's standard ones as cel-js has them, `matches` on RE2, and part of
 * a list (`slice` as cel-go's lists library has it, `take`, `drop`: slices.ts). The list
 * docs/playbook.md gives (a test holds the two together, and checks each example), and what a call of a name
 * that is none of them is told.
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
