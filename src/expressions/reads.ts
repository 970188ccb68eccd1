/**
 * What an expression reads, from its syntax tree (not from its text, where `steps.x` inside a string literal, or
 * a step chosen at run time, `steps[inputs.which]`, would be misread): the steps and their members, the inputs,
 * the secrets and the variables of `env`, each read by dot or by a literal index (`steps["x"]`, `inputs["name"]`), none under a
 * comprehension variable of the same name. The plan keeps the step outputs read (runner/plan.ts); validation
 * checks the steps, inputs and variables named (playbook/expression-checks.ts).
 */
import { syntaxTree } from './cel.js';
import { COMPREHENSIONS } from './functions.js';
import { findExpressions } from './template.js';

interface Node {
  op: string;
  args: unknown;
  pos: number;
}

/** A read of `steps.<id>`: the member names that follow it (up to two), and the offset of `steps`. */
export interface StepRead {
  id: string;
  members: string[];
  at: number;
}

export interface Reads {
  steps: StepRead[];
  /** An expression chooses a step at run time (`steps[e]`, or `steps` whole): it may read any. */
  anyStep: boolean;
  /** `inputs.<name>`: the name and the offset of `inputs`. */
  inputs: { name: string; at: number }[];
  /** `env.<name>`: the name and the offset of `env`. */
  env: { name: string; at: number }[];
  /** Secrets read by name. */
  secrets: string[];
  /** Secrets whose presence is tested (`has(secrets.X)`, `"X" in secrets`). A secret chosen at run time is in neither. */
  testedSecrets: string[];
  /** An expression chooses a secret at run time (`secrets[e]`, or `secrets` whole): it may read any. */
  anySecret: boolean;
  /** Every context variable it reads (`vars`, `run`, ...; not a comprehension's), with its offset. */
  variables: { name: string; at: number }[];
}

const MACROS = new Set<string>(COMPREHENSIONS);

const isMember = (n: Node | undefined): n is Node =>
  n !== undefined && (n.op === '.' || n.op === '.?' || n.op === '[]' || n.op === '[?]');

/** The member name read at member node `n` (`x.name`, `x["name"]`), or undefined when chosen at run time. */
function memberName(n: Node): string | undefined {
  if (n.op === '.' || n.op === '.?') return (n.args as [Node, string])[1];
  const at = (n.args as [Node, Node])[1];
  return at.op === 'value' && typeof at.args === 'string' ? at.args : undefined;
}

/** The member names read on `n`, outward along `path` (its ancestors, nearest last): at most `max`. */
function chain(n: Node, path: Node[], max: number): string[] {
  const names: string[] = [];
  let below = n;
  for (let i = path.length - 1; i >= 0 && names.length < max; i--) {
    const up = path[i] as Node;
    if (!isMember(up) || (up.args as Node[])[0] !== below) break;
    const name = memberName(up);
    if (name === undefined) break;
    names.push(name);
    below = up;
  }
  return names;
}

function visit(n: Node, path: Node[], bound: Set<string>, into: Reads): void {
  if (n.op === 'id') {
    const name = n.args as string;
    if (bound.has(name)) return;
    into.variables.push({ name, at: n.pos });
    if (name === 'steps') {
      const [id, ...members] = chain(n, path, 3);
      if (id === undefined) into.anyStep = true;
      else into.steps.push({ id, members, at: n.pos });
    } else if (name === 'inputs') {
      const [input] = chain(n, path, 1);
      if (input !== undefined) into.inputs.push({ name: input, at: n.pos });
    } else if (name === 'env') {
      const [variable] = chain(n, path, 1);
      if (variable !== undefined) into.env.push({ name: variable, at: n.pos });
    } else if (name === 'secrets') {
      const [secret] = chain(n, path, 1);
      // `"X" in secrets` names its secret at the `in` (below); any other use without a name may read any.
      if (secret === undefined) {
        const up = path.at(-1);
        const named = up?.op === 'in' && isNamedKey((up.args as [Node, Node])[0]);
        if (!named) into.anySecret = true;
        return;
      }
      const call = path.at(-2);
      const tested = call?.op === 'call' && (call.args as [string, Node[]])[0] === 'has';
      (tested ? into.testedSecrets : into.secrets).push(secret);
    }
    return;
  }
  if (n.op === 'in') {
    const [key, of] = n.args as [Node, Node];
    if (of.op === 'id' && of.args === 'secrets' && !bound.has('secrets') && isNamedKey(key))
      into.testedSecrets.push(key.args as string);
  }
  // A comprehension's variable hides a context variable of its name in the macro's body, not in its receiver.
  let inner = bound;
  let receiver: unknown;
  if (n.op === 'rcall') {
    const [name, recv, args] = n.args as [string, Node, Node[]];
    receiver = recv;
    if (MACROS.has(name) && args[0]?.op === 'id') inner = new Set(bound).add(args[0].args as string);
  }
  path.push(n);
  for (const child of children(n)) visit(child, path, child === receiver ? bound : inner, into);
  path.pop();
}

/** A key written as a constant string (`"X" in secrets`). */
const isNamedKey = (key: Node): boolean => key.op === 'value' && typeof key.args === 'string';

/** The nodes below `n`: every node among its arguments, nested in arrays or not. */
function children(n: Node): Node[] {
  const out: Node[] = [];
  const add = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(add);
    else if (v && typeof v === 'object' && typeof (v as Node).op === 'string') out.push(v as Node);
  };
  if (n.op !== 'value' && n.op !== 'id') add(n.args);
  return out;
}

/** By expression source: playbooks repeat their expressions (`${{ inputs.account }}`). */
const cache = new Map<string, Reads>();

/** What a valid expression reads (see Reads). Throws what parsing throws when `source` is not an expression. */
export function readsOf(source: string): Reads {
  let r = cache.get(source);
  if (!r) {
    r = {
      steps: [],
      anyStep: false,
      inputs: [],
      env: [],
      secrets: [],
      testedSecrets: [],
      anySecret: false,
      variables: [],
    };
    // The loop's variables in scope: the tree is the same, and `item` parses wherever it is written.
    visit(syntaxTree(source, true) as Node, [], new Set(), r);
    if (cache.size >= 10_000) cache.clear();
    cache.set(source, r);
  }
  return r;
}

/**
 * Gives `found` what each expression in `v` reads: the `${{ }}` of its strings, nested in lists and objects at
 * any depth. A string that is no expression is passed over (validation says so, where it is). `members`, when
 * it gives something for an object, is what of that object to look at instead of all of its values.
 */
export function readsIn(
  v: unknown,
  found: (r: Reads) => void,
  members?: (o: object) => Iterable<unknown> | undefined,
): void {
  const visit = (x: unknown): void => {
    if (typeof x === 'string') {
      if (!x.includes('${{')) return;
      for (const { source } of findExpressions(x).spans) {
        let r: Reads;
        try {
          r = readsOf(source);
        } catch {
          continue;
        }
        found(r);
      }
    } else if (Array.isArray(x)) x.forEach(visit);
    else if (x && typeof x === 'object') for (const y of members?.(x) ?? Object.values(x)) visit(y);
  };
  visit(v);
}
