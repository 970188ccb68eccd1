/**
 * JSON Schemas as the reference docs show them: one table row per member (nested members as dotted paths),
 * with its type, whether it is required, its default and its description; and an example value built from a
 * schema. The docs generator (scripts/docs/) and `fleetbook actions ACTION` both print through this.
 */
type Schema = Record<string, unknown>;

const asSchema = (v: unknown): Schema => (v && typeof v === 'object' ? (v as Schema) : {});
const branches = (s: Schema): Schema[] => ((s.anyOf ?? s.oneOf) as Schema[] | undefined) ?? [];

/** A member's type in a few words: `string`, `integer ≥ 1`, `"a" \| "b"`, `array of object`, ... */
export function typeOf(s: Schema): string {
  if (s.const !== undefined) return `\`${JSON.stringify(s.const)}\``;
  if (Array.isArray(s.enum)) return s.enum.map((v) => `\`${JSON.stringify(v)}\``).join(' \\| ');
  const type = s.type;
  if (!type && s.then) return typeOf(asSchema(s.then));
  if (type === 'array') return `array of ${typeOf(asSchema(s.items))}`;
  if (type === 'object' && s.patternProperties) return 'map';
  if (typeof type === 'string') {
    const bounds = [
      s.minimum !== undefined ? `≥ ${String(s.minimum)}` : '',
      s.maximum !== undefined ? `≤ ${String(s.maximum)}` : '',
      s.format ? `(${String(s.format)})` : '',
    ].filter(Boolean);
    return [type, ...bounds].join(' ');
  }
  if (Array.isArray(type)) return type.join(' or ');
  const alternatives = branches(s).filter((b) => Object.keys(b).length);
  if (alternatives.length) return [...new Set(alternatives.map(typeOf))].join(' or ');
  return 'any';
}

/**
 * The default a member's schema states: its `default`, or the "Default ..." of its description, a sentence or a
 * clause after `;` of its own ("Devices to move to the default group" states none).
 */
export function defaultOf(s: Schema): string {
  if (s.default !== undefined) return `\`${JSON.stringify(s.default)}\``;
  const m = /(?:^|[.;]\s+)Default:? ([^.;]+)[.;]?/i.exec(
    typeof s.description === 'string' ? s.description : '',
  );
  return m ? (m[1] as string).trim() : '';
}

interface Member {
  path: string;
  schema: Schema;
  required: boolean;
}

/** Every member of an object schema, and the members of the objects in it, to `depth` levels. */
export function members(s: Schema, depth = 3, prefix = ''): Member[] {
  const out: Member[] = [];
  const object = s.type === 'array' ? asSchema(s.items) : s;
  const props = asSchema(object.properties);
  const required = new Set((object.required as string[] | undefined) ?? []);
  for (const [name, raw] of Object.entries(props)) {
    const child = asSchema(raw);
    const path = `${prefix}${name}`;
    out.push({ path, schema: child, required: required.has(name) });
    const inner = child.type === 'array' ? asSchema(child.items) : child;
    if (depth > 1 && inner.properties)
      out.push(...members(inner, depth - 1, `${path}${child.type === 'array' ? '[]' : ''}.`));
  }
  return out;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/**
 * A Markdown table of an object schema's members; of a schema of several shapes (an answer the service gives in
 * more than one form), a table for each; a line saying so when it has none.
 */
export function membersTable(s: Schema, withDefaults = true, depth = 3): string[] {
  const rows = members(s, depth);
  const shapes = branches(s);
  if (!rows.length && shapes.some((b) => members(b, depth).length))
    return shapesTables(shapes, withDefaults, depth);
  if (!rows.length) return ['No members.'];
  return table(rows, withDefaults);
}

/** Each shape of an answer of several: its members' table, or, for a list of an earlier shape, a line saying so. */
function shapesTables(shapes: Schema[], withDefaults: boolean, depth: number): string[] {
  const out = [`One of ${shapes.length} shapes.`];
  shapes.forEach((shape, i) => {
    const items = shape.type === 'array' ? JSON.stringify(shape.items) : undefined;
    const same = items === undefined ? -1 : shapes.findIndex((b) => JSON.stringify(b) === items);
    const what = shape.type === 'array' ? 'a list of objects' : 'an object';
    if (same >= 0) out.push('', `${nth(i)}: ${what} of the ${nth(same).toLowerCase()} shape.`);
    else {
      const rows = members(shape, depth);
      out.push('', `${nth(i)}: ${rows.length ? `${what}:` : `${what} with no members listed.`}`);
      if (rows.length) out.push('', ...table(rows, withDefaults));
    }
  });
  return out;
}

const nth = (i: number) => ['First', 'Second', 'Third', 'Fourth'][i] ?? `Shape ${i + 1}`;

function table(rows: Member[], withDefaults: boolean): string[] {
  const head = withDefaults
    ? ['| member | type | required | default | description |', '| --- | --- | --- | --- | --- |']
    : ['| member | type | description |', '| --- | --- | --- |'];
  return [
    ...head,
    ...rows.map((m) => {
      const description = cell(typeof m.schema.description === 'string' ? m.schema.description : '');
      return withDefaults
        ? `| \`${m.path}\` | ${typeOf(m.schema)} | ${m.required ? 'yes' : ''} | ${cell(defaultOf(m.schema))} | ${description} |`
        : `| \`${m.path}\` | ${typeOf(m.schema)} | ${description} |`;
    }),
  ];
}
