/**
 * What a playbook's expressions read, from their syntax trees (not from their text, where `secrets.X` inside a
 * string literal or a step chosen at run time, `steps[inputs.which]`, would be misread):
 * - for each step id, the members read: `steps.x.output` gives `output`, `steps.x.items` `items`, a listing's
 *   counts (`steps.x.output.count`, `.leftOut`) `counts`, any other member `other`, `steps.x` alone `*`. A step
 *   chosen at run time (`steps[e]`, `steps` whole) counts as every step read whole;
 * - the secrets needed (`secrets.X`, `secrets["X"]`), and those whose presence is tested (`has(secrets.X)`,
 *   `"X" in secrets`): optional wherever else they are read. A secret chosen at run time
 *   (`secrets[e]`) is not known before the run.
 */
import { syntaxTree } from '../expressions/cel.js';
import { findExpressions } from '../expressions/template.js';

interface Node {
  op: string;
  args: unknown;
}

export interface Reads {
  /** For each step id, its members read; `*` under ANY_STEP when a step is chosen at run time. */
  steps: Map<string, Set<string>>;
  /** True when an expression chooses a step at run time: every step's output is kept. */
  anyStep: boolean;
  secrets: Set<string>;
  optionalSecrets: Set<string>;
}

const MACROS = new Set(['map', 'filter', 'all', 'exists', 'exists_one']);
const COUNTS = new Set(['count', 'leftOut']);

/** A member name read at `n` (`x.name`, `x["name"]`), or undefined when it is chosen at run time. */
function memberName(n: Node): string | undefined {
  if (n.op === '.' || n.op === '.?') return (n.args as [Node, string])[1];
  const at = (n.args as [Node, Node])[1];
  return at.op === 'value' && typeof at.args === 'string' ? at.args : undefined;
}

const isMember = (n: Node | undefined): n is Node =>
  n !== undefined && (n.op === '.' || n.op === '.?' || n.op === '[]' || n.op === '[?]');

/** Reads of one expression, added to `into`. `path` holds the nodes from the root down to the one visited. */
function visit(n: Node, path: Node[], bound: Set<string>, into: Reads): void {
  if (n.op === 'id') {
    const name = n.args as string;
    if (bound.has(name)) return;
    const parent = path.at(-1);
    const inner = isMember(parent) && (parent.args as Node[])[0] === n ? parent : undefined;
    if (name === 'steps') {
      const id = inner && memberName(inner);
      if (id === undefined) {
        into.anyStep = true;
        return;
      }
      const of = path.at(-2);
      const first = isMember(of) && (of.args as Node[])[0] === inner ? memberName(of) : undefined;
      const under = path.at(-3);
      const second =
        first && isMember(under) && (under.args as Node[])[0] === of ? memberName(under) : undefined;
      const member =
        first === undefined
          ? '*'
          : first === 'output' && second !== undefined && COUNTS.has(second)
            ? 'counts'
            : first === 'output' || first === 'items'
              ? first
              : 'other';
      into.steps.set(id, (into.steps.get(id) ?? new Set()).add(member));
    } else if (name === 'secrets' && inner) {
      const key = memberName(inner);
      if (key === undefined) return;
      const above = path.at(-2);
      const tested = above?.op === 'call' && (above.args as [string, Node[]])[0] === 'has';
      (tested ? into.optionalSecrets : into.secrets).add(key);
    }
    return;
  }
  if (n.op === 'in') {
    const [key, of] = n.args as [Node, Node];
    if (of.op === 'id' && of.args === 'secrets' && !bound.has('secrets') && key.op === 'value')
      if (typeof key.args === 'string') into.optionalSecrets.add(key.args);
  }
  let inner = bound;
  if (n.op === 'rcall') {
    const [name, , args] = n.args as [string, Node, Node[]];
    const v = args[0];
    if (MACROS.has(name) && v?.op === 'id') inner = new Set(bound).add(v.args as string);
  }
  path.push(n);
  for (const child of children(n)) visit(child, path, child === receiverOf(n) ? bound : inner, into);
  path.pop();
}

const receiverOf = (n: Node): unknown => (n.op === 'rcall' ? (n.args as unknown[])[1] : undefined);

/** The nodes below `n`, whatever its kind: every node in its arguments, nested in arrays or not. */
function children(n: Node): Node[] {
  const out: Node[] = [];
  const add = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(add);
    else if (v && typeof v === 'object' && typeof (v as Node).op === 'string') out.push(v as Node);
  };
  if (n.op !== 'value' && n.op !== 'id') add(n.args);
  return out;
}

/** Adds the reads of every expression in the strings of `value` (any JSON-like value) to `into`. */
export function readsOf(value: unknown, into: Reads, skip?: (v: unknown) => boolean): void {
  if (skip?.(value)) return;
  if (typeof value === 'string') {
    if (!value.includes('${{')) return;
    for (const { source } of findExpressions(value).spans) {
      let tree: Node;
      try {
        // The loop's variables in scope: the tree is the same, and `item` parses wherever it is written.
        tree = syntaxTree(source, true) as Node;
      } catch {
        continue; // not an expression: validation says so, with its position
      }
      visit(tree, [], new Set(), into);
    }
  } else if (Array.isArray(value)) value.forEach((v) => readsOf(v, into, skip));
  else if (value && typeof value === 'object') Object.values(value).forEach((v) => readsOf(v, into, skip));
}

export function emptyReads(): Reads {
  return { steps: new Map(), anyStep: false, secrets: new Set(), optionalSecrets: new Set() };
}
