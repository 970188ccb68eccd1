/**
 * The playbook loader: YAML with positions → a checked playbook, or every problem at `file:line:col`.
 *
 * 1. Parse with `yaml`, keeping positions; duplicate keys are errors, alias expansion is capped (no
 *    billion laughs), and `__proto__` / `constructor` are plain keys (yaml defines them as own properties).
 * 2. Check the top level against the playbook schema, then each step against the schema of its kind, and each
 *    `with` against its action's request schema (expressions allowed in place of values). Checking piece by
 *    piece keeps ajv's messages about the piece that is wrong, instead of one per branch of a union.
 * 3. Semantic checks (checker.ts): unique step ids, references to earlier steps only, expressions parsed and
 *    type-checked, declared inputs, retry selectors the action can meet, cron, time zones, unreachable steps.
 *
 * A valid playbook written in the everyday subset of YAML takes a fast path first (quickLoad): the same
 * checks on the same data, without positions, since there is nothing to position.
 */
import type * as YamlModule from 'yaml';
import type { Document, Node } from 'yaml';
import { ACTIONS } from '../api/catalog.js';
import { check } from '../api/validate.js';
// eslint-disable-next-line no-restricted-imports -- layer exception: what a playbook may write (engine action declarations, selectors, static checks) still lives in src/actions/; it belongs below src/playbook/
import { ENGINE_ACTION_NAMES } from '../actions/engine.js';
// eslint-disable-next-line no-restricted-imports -- layer exception: what a playbook may write (engine action declarations, selectors, static checks) still lives in src/actions/; it belongs below src/playbook/
import {
  completionProblem,
  confirmProblem,
  deviceSelectorProblem,
  pollProblem,
  stepSelectorProblem,
} from '../actions/selectors.js';
import { Checker, type LoadedPlaybook, type Locator, type PlaybookRules, type Seg } from './checker.js';
import { boundMessage, sortDiagnostics, type Diagnostic, type Rule, type Severity } from './diagnostics.js';
import { generatedRules } from './generated-rules.js';
import { quickLoad } from './quick-load.js';
import { protectExpressions } from './protect.js';
import { readSource, YAML_OPTIONS, yamlMessage, yamlShapeProblem, type SourceText } from './source.js';
import type * as Schema from './schema.js';
import { findUnquoted, restoreDocument, unquotedWarning } from './unquoted.js';
import { onFirstUse } from '../util/on-first-use.js';

export type { LoadedPlaybook } from './checker.js';
type Json = Record<string, unknown>;

/** Most aliases a playbook may expand; far above any real use, far below a billion laughs. */
const MAX_ALIASES = 100;
const withSchemas = new Map<string, object>();

/**
 * The TypeBox schemas of playbooks, loaded when first needed: a valid playbook is vouched for by the rules the
 * build generated (generated-rules.ts), and only a problem to explain, or a build without them, needs these.
 */
const schemas = onFirstUse<typeof Schema>(import.meta.url, './schema.js');
/** The YAML parser of the full path: a playbook in the everyday subset is read by fast-yaml.ts without it. */
const yaml = onFirstUse<typeof YamlModule>(import.meta.url, 'yaml');

/** The rules from the TypeBox schemas and the action catalog, compiled by ajv as they are first used. */
export const PLAYBOOK_RULES: PlaybookRules = {
  actions: [...ACTIONS, ...ENGINE_ACTION_NAMES],
  top: (playbook) => check(schemas().PLAYBOOK_TOP, playbook),
  step: (kind, step) => check(schemas().STEP_SCHEMAS[kind], step),
  args(action, args) {
    const schema = schemas().withSchemaFor(action);
    if (!schema) return [];
    let compiled = withSchemas.get(action);
    if (!compiled) {
      compiled = schemas().allowExpressions(JSON.parse(JSON.stringify(schema))) as object;
      withSchemas.set(action, compiled);
    }
    return check(compiled, args);
  },
  argKeys(action) {
    const schema = schemas().withSchemaFor(action);
    return schema ? ((schema as { properties?: Json }).properties ?? {}) : undefined;
  },
  stepSelectorProblem,
  deviceSelectorProblem,
  confirmProblem,
  completionProblem,
  pollProblem,
};

export async function loadPlaybookFile(file: string): Promise<LoadedPlaybook> {
  return loadPlaybookText(await readSource(file));
}

/** A playbook read by source.ts: refused when its bytes are not UTF-8, loaded when they are. */
export function loadPlaybookText(text: SourceText): LoadedPlaybook {
  return text.diagnostics.length ? text : loadPlaybook(text.source, text.file);
}

export function loadPlaybook(source: string, file = '<input>'): LoadedPlaybook {
  // The rules generated at build time vouch for a valid playbook without compiling a schema.
  return (
    quickLoad(source, file, generatedRules() ?? PLAYBOOK_RULES) ??
    loadWithPositions(source, file, PLAYBOOK_RULES)
  );
}

/** The full path: parsed with positions, every problem found and positioned. */
function loadWithPositions(source: string, file: string, rules: PlaybookRules): LoadedPlaybook {
  const y = new YamlSource(source, file);
  const data = y.parse();
  const c = new Checker(file, rules, y);
  if (data !== undefined) c.checkPlaybook(data);
  const diagnostics = sortDiagnostics(
    [...y.diagnostics, ...c.diagnostics].map((d) => ({ ...d, message: boundMessage(y.restore(d.message)) })),
  );
  const ok = data !== undefined && !diagnostics.some((d) => d.severity === 'error');
  return {
    file,
    source,
    diagnostics,
    ...(ok ? { playbook: data as unknown as LoadedPlaybook['playbook'] } : {}),
  };
}

/** Where the value at `path` of a playbook's source is (its nearest ancestor when absent). */
export function positionIn(source: string, file: string, path: Seg[]): { line: number; column: number } {
  const at = new YamlSource(source, file);
  at.parse();
  return at.position(path, 'value');
}

export function hasErrors(r: LoadedPlaybook): boolean {
  return r.diagnostics.some((d) => d.severity === 'error');
}

/** The source parsed by `yaml` with positions: its YAML problems, and where each path is. */
class YamlSource implements Locator {
  readonly diagnostics: Diagnostic[] = [];
  private lc = new (yaml().LineCounter)();
  private doc?: Document;
  restore: (s: string) => string = (s) => s;

  constructor(
    private readonly source: string,
    private readonly file: string,
  ) {}

  // ── parsing ───────────────────────────────────────────────────────────────────────────────────

  /** The data, or undefined after reporting why there is none. */
  parse(): Json | undefined {
    try {
      return this.parseYaml();
    } catch (e) {
      // The yaml parser recurses: absurdly deep nesting exhausts the stack. Report it; never crash.
      this.reportOffset(
        0,
        'yaml',
        `the YAML could not be parsed: ${firstLine((e as Error).message)} (nested too deeply?)`,
      );
      return undefined;
    }
  }

  private parseYaml(): Json | undefined {
    const safe = protectExpressions(this.source);
    this.restore = safe.restore;
    const doc = yaml().parseDocument(safe.text, { lineCounter: this.lc, ...YAML_OPTIONS });
    this.doc = doc;
    // One syntax error per line: the ones after it on the same line only echo it.
    const lines = new Set<number>();
    for (const e of doc.errors) {
      const line = this.lc.linePos(e.pos[0]).line;
      if (lines.has(line)) continue;
      lines.add(line);
      const rule: Rule = e.code === 'DUPLICATE_KEY' ? 'duplicate-key' : 'yaml';
      const message =
        e.code === 'DUPLICATE_KEY' ? `duplicate key ${this.keyAt(e.pos[0])}` : yamlMessage(e, 'a playbook');
      this.reportOffset(e.pos[0], rule, message);
    }
    if (doc.errors.length) return undefined;
    // Refused here, where it can be placed: an endless alias, a key that is not a name.
    const refused = yamlShapeProblem(doc, yaml());
    if (refused) {
      this.reportOffset(refused.offset, 'yaml', refused.message);
      return undefined;
    }
    for (const u of findUnquoted(doc, safe, yaml().visit)) {
      const { line, col } = this.lc.linePos(u.start);
      this.diagnostics.push(unquotedWarning(this.file, line, col, u.inFlow));
    }
    let data: unknown;
    try {
      restoreDocument(doc, safe, yaml().visit);
      data = doc.toJS({ maxAliasCount: MAX_ALIASES }) as unknown;
    } catch (e) {
      this.reportOffset(
        0,
        'yaml',
        `${firstLine((e as Error).message)} (aliases are capped at ${MAX_ALIASES})`,
      );
      return undefined;
    }
    if (!data || typeof data !== 'object' || Array.isArray(data)) {
      this.reportOffset(0, 'yaml', 'a playbook is a YAML mapping (version, name, on, steps, ...)');
      return undefined;
    }
    return data as Json;
  }

  private keyAt(offset: number): string {
    const m = /^[\s-]*("[^"]*"|'[^']*'|[^:\s]+)/.exec(this.source.slice(offset));
    return m ? `\`${m[1]}\`` : '';
  }

  private reportOffset(offset: number, rule: Rule, message: string, severity: Severity = 'error'): void {
    const { line, col } = this.lc.linePos(offset);
    this.diagnostics.push({ file: this.file, line, column: col, message, rule, severity });
  }

  // ── positions ─────────────────────────────────────────────────────────────────────────────────

  linePos(offset: number): { line: number; col: number } {
    return this.lc.linePos(offset);
  }

  position(path: Seg[], where: 'key' | 'value'): { line: number; column: number } {
    const { node, keyNode, ancestorKey, ancestor, alias } = this.nodeAt(path);
    // Inside an alias, each use of it is told where it is used, not all at its anchor.
    const target =
      alias ?? (node ? (where === 'key' && keyNode ? keyNode : node) : (ancestorKey ?? ancestor));
    const offset = target?.range?.[0] ?? 0;
    const { line, col } = this.lc.linePos(offset);
    return { line, column: col };
  }

  /**
   * The YAML node at `path`, its key node, and the deepest existing ancestor when it does not exist; `alias`, the
   * first alias the path goes through (`*name`), when it goes through one below its end.
   */
  private nodeAt(path: Seg[]): {
    node?: Node;
    keyNode?: Node;
    ancestor?: Node;
    ancestorKey?: Node;
    alias?: Node;
  } {
    let node = this.doc?.contents as Node | null | undefined;
    let keyNode: Node | undefined;
    let alias: Node | undefined;
    const { isAlias, isMap, isScalar, isSeq } = yaml();
    for (const seg of path) {
      if (node && isAlias(node) && this.doc) {
        alias ??= node;
        node = node.resolve(this.doc) as Node | undefined;
      }
      let next: Node | undefined;
      let nextKey: Node | undefined;
      if (node && isMap(node)) {
        const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg));
        if (pair) {
          next = (pair.value as Node | null) ?? (pair.key as Node);
          nextKey = pair.key as Node;
        }
      } else if (node && isSeq(node)) {
        next = node.items[Number(seg)] as Node | undefined;
        nextKey = next;
      }
      if (!next)
        return {
          ancestor: node ?? undefined,
          ...(keyNode ? { ancestorKey: keyNode } : {}),
          ...(alias ? { alias } : {}),
        };
      node = next;
      keyNode = nextKey;
    }
    return { node: node ?? undefined, ...(keyNode ? { keyNode } : {}), ...(alias ? { alias } : {}) };
  }

  /** Maps an offset in a string's value to an offset in the file (exact for plain and quoted one-line scalars). */
  stringOffset(path: Seg[], text: string): (i: number) => number {
    const node = this.nodeAt(path).node;
    const range = node?.range;
    if (!range) return () => 0;
    const raw = this.source.slice(range[0], range[1]);
    const direct = raw.indexOf(text);
    if (direct !== -1) return (i) => range[0] + direct + i;
    // Quoted or folded: walk the value and the source text together. A line break with its indentation
    // folds to one space (or to a newline in a block scalar); quotes and escape characters exist only in
    // the source.
    const map = new Int32Array(text.length + 1);
    let j = 0;
    for (let i = 0; i < text.length; i++) {
      while (j < raw.length && raw[j] !== text[i]) {
        if (raw[j] === '\n' && (text[i] === ' ' || text[i] === '\n')) break;
        j++;
      }
      map[i] = Math.min(j, raw.length);
      if (raw[j] === '\n' && text[i] !== '\n') {
        j++;
        while (raw[j] === ' ' || raw[j] === '\t') j++;
      } else if (raw[j] === '\n') {
        j++;
        while ((raw[j] === ' ' || raw[j] === '\t') && raw[j] !== text[i + 1]) j++;
      } else j++;
    }
    map[text.length] = Math.min(j, raw.length);
    return (i) => range[0] + (map[Math.max(0, Math.min(i, text.length))] ?? 0);
  }
}

function firstLine(m: string): string {
  return m.split('\n')[0]?.trim() ?? m;
}
