/**
 * Fuzzing the playbook loader (issue 4: "10,000 fuzzed inputs: no crash, no unpositioned error").
 *
 * 10,000 inputs in all, from four sources: arbitrary strings, YAML-looking text built from the language's own
 * words, mutations of the valid fixtures and example playbooks (lines deleted, duplicated, swapped, characters
 * inserted, text cut), and random JSON values written out as YAML. For every input the loader must return,
 * never throw, and every diagnostic must be positioned inside the file, with a message and a known rule.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { formatText, RULES } from '../../src/playbook/diagnostics.js';
import { loadPlaybook } from '../../src/playbook/load.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RULE_NAMES = new Set(Object.keys(RULES));
const PROTOTYPE_KEYS = Object.getOwnPropertyNames(Object.prototype).sort();

/** Runs per source; they add up to 10,000. */
const RUNS = { strings: 3_000, yamlish: 3_000, mutations: 2_000, json: 2_000 } as const;

/** The loader's contract on any input whatsoever. */
function checkLoad(source: string): void {
  const r = loadPlaybook(source, 'fuzz.yaml');
  const lines = source.split('\n').length;
  for (const d of r.diagnostics) {
    const where = `${d.line}:${d.column} ${d.message} [${d.rule}] in ${JSON.stringify(source.slice(0, 300))}`;
    expect(Number.isInteger(d.line) && d.line >= 1, `line ${where}`).to.equal(true);
    expect(Number.isInteger(d.column) && d.column >= 1, `column ${where}`).to.equal(true);
    expect(d.line, `line past the end of the file: ${where}`).to.be.at.most(lines + 1);
    expect(typeof d.message === 'string' && d.message.trim().length > 0, `message ${where}`).to.equal(true);
    expect(RULE_NAMES.has(d.rule), `rule ${where}`).to.equal(true);
    expect(['error', 'warning']).to.include(d.severity);
    expect(d.file).to.equal('fuzz.yaml');
    expect(formatText(d, source)).to.be.a('string');
  }
  const errors = r.diagnostics.some((d) => d.severity === 'error');
  if (errors) expect(r.playbook, 'a playbook with errors is not handed out').to.equal(undefined);
}

const seeds: string[] = [
  ...readdirSync(join(ROOT, 'test/fixtures/playbooks/valid')).map(
    (f) => `test/fixtures/playbooks/valid/${f}`,
  ),
  ...readdirSync(join(ROOT, 'playbooks')).map((f) => `playbooks/${f}`),
]
  .filter((f) => /\.ya?ml$/.test(f))
  .sort()
  .map((f) => readFileSync(join(ROOT, f), 'utf8'));

// ── YAML-looking text from the language's own words ─────────────────────────────────────────────
const KEYS = [
  'version',
  'name',
  'description',
  'on',
  'callback',
  'schedule',
  'manual',
  'service',
  'cron',
  'timezone',
  'missed',
  'inputs',
  'type',
  'default',
  'enum',
  'vars',
  'concurrency',
  'key',
  'limit',
  'limits',
  'maxDevices',
  'steps',
  'finally',
  'id',
  'uses',
  'with',
  'if',
  'forEach',
  'items',
  'batchSize',
  'parallel',
  'wait',
  'for',
  'timeout',
  'event',
  'match',
  'poll',
  'until',
  'set',
  'fail',
  'message',
  'retry',
  'maxAttempts',
  'delay',
  'devices',
  'ignore',
  'onError',
  'accountName',
  'deviceList',
  'cacheMode',
  '__proto__',
  'constructor',
  'prototype',
  '<<',
  '? complex',
  '"quoted key"',
  "'single'",
  '',
];
const VALUES = [
  '1',
  '0',
  '-1',
  '1.5',
  '1e400',
  'true',
  'null',
  '~',
  '"0000123456-00001"',
  "'354890061234567'",
  'devices.list',
  'devices.suspnd',
  'location.createReport',
  'log',
  'notify.webhook',
  '[http.5xx, http.429]',
  '[SVC CACHE UNAVAILABLE]',
  '"0 2 * * *"',
  '"*/5 * * * * *"',
  'America/New_York',
  'Mars/Base',
  '2h',
  '5 minutes',
  '${{ steps.a.output }}',
  '${{ inputs.x + 1 }}',
  '${{ item }}',
  '${{ index }}',
  '${{ 1 + }}',
  '${{',
  '}}',
  '${{ "}}" }}',
  "${{ {'a': 1} }}",
  '${{ event.a > 5 ? "x" : "y" }}',
  '{ a: ${{ b }}, c: [d] }',
  '[',
  ']',
  '{',
  '}',
  '&a [1, 2]',
  '*a',
  '*missing',
  '!!str 1',
  '!!binary aGk=',
  '!custom x',
  '|',
  '>-',
  '"unterminated',
  "'it''s'",
  '"\\u0000"',
  '# comment',
  '---',
  '...',
  '\t',
  'é😀',
  '- x',
  ':',
  '',
];
const yamlLine = fc
  .record({
    indent: fc.integer({ min: 0, max: 10 }),
    dash: fc.boolean(),
    key: fc.constantFrom(...KEYS),
    colon: fc.constantFrom(': ', ':', ' : ', ''),
    value: fc.constantFrom(...VALUES),
    tail: fc.constantFrom('', '', '', ' # c', ' ${{ x }}', ',', ' \t'),
  })
  .map((l) => `${' '.repeat(l.indent)}${l.dash ? '- ' : ''}${l.key}${l.colon}${l.value}${l.tail}`);
const directive = fc.constantFrom('', '', '%YAML 1.2\n---\n', '---\n', '%TAG ! tag:x,2000:\n---\n', '\ufeff');
const yamlish = fc
  .tuple(directive, fc.array(yamlLine, { minLength: 0, maxLength: 40 }), fc.constantFrom('\n', '\r\n', '\r'))
  .map(([head, lines, eol]) => head + lines.join(eol));

// ── mutations of valid playbooks ────────────────────────────────────────────────────────────────
const INSERTS = [
  ':',
  ': ',
  '-',
  '- ',
  '#',
  '{',
  '}',
  '[',
  ']',
  ',',
  '"',
  "'",
  '&',
  '*',
  '!',
  '|',
  '>',
  '%',
  '@',
  '`',
  '\t',
  '\n',
  '\r',
  '  ',
  '${{',
  '}}',
  '${{ steps.nope.output }}',
  '${{ item }}',
  '\u0000',
  '\u00a7',
  '\u00a70\u00a7',
  '\ufeff',
  'é',
  '😀',
];
type Mutation =
  | { op: 'delete' | 'duplicate'; at: number }
  | { op: 'swap'; at: number; to: number }
  | { op: 'insert'; at: number; text: string }
  | { op: 'cut'; at: number; length: number };
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constantFrom('delete' as const, 'duplicate' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('swap' as const), at: fc.nat(), to: fc.nat() }),
  fc.record({
    op: fc.constant('insert' as const),
    at: fc.nat(),
    text: fc.oneof(fc.constantFrom(...INSERTS), fc.string({ maxLength: 4 })),
  }),
  fc.record({ op: fc.constant('cut' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 40 }) }),
);

function mutate(source: string, ms: Mutation[]): string {
  let text = source;
  for (const m of ms) {
    const lines = text.split('\n');
    const i = m.at % lines.length;
    switch (m.op) {
      case 'delete':
        lines.splice(i, 1);
        text = lines.join('\n');
        break;
      case 'duplicate':
        lines.splice(i, 0, lines[i] ?? '');
        text = lines.join('\n');
        break;
      case 'swap': {
        const j = m.to % lines.length;
        [lines[i], lines[j]] = [lines[j] ?? '', lines[i] ?? ''];
        text = lines.join('\n');
        break;
      }
      case 'insert': {
        const at = m.at % (text.length + 1);
        text = text.slice(0, at) + m.text + text.slice(at);
        break;
      }
      case 'cut': {
        const at = m.at % (text.length + 1);
        text = text.slice(0, at) + text.slice(at + m.length);
        break;
      }
    }
  }
  return text;
}

// ── JSON values written out as YAML ─────────────────────────────────────────────────────────────
const stepLike = fc.dictionary(
  fc.constantFrom(
    'id',
    'uses',
    'with',
    'if',
    'forEach',
    'parallel',
    'set',
    'fail',
    'wait',
    'retry',
    'devices',
  ),
  fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.constantFrom('devices.list', 'log', '${{ steps.x.items }}', 'a'),
  ),
  { maxKeys: 5 },
);
const playbookLike = fc.record(
  {
    version: fc.oneof(fc.constant(1), fc.jsonValue({ maxDepth: 1 })),
    name: fc.oneof(fc.constant('fuzz'), fc.string({ maxLength: 10 })),
    on: fc.oneof(fc.constant({ manual: true }), fc.jsonValue({ maxDepth: 2 })),
    inputs: fc.jsonValue({ maxDepth: 3 }),
    steps: fc.array(stepLike, { maxLength: 5 }),
    finally: fc.array(stepLike, { maxLength: 2 }),
  },
  { requiredKeys: ['version', 'name', 'on', 'steps'] },
);

describe('fuzz: the loader on 10,000 generated inputs', function () {
  this.timeout(120_000);

  it('uses 10,000 inputs in all', () => {
    expect(Object.values(RUNS).reduce((a, b) => a + b, 0)).to.be.at.least(10_000);
    expect(seeds.length).to.be.greaterThan(5);
  });

  it(`never throws on arbitrary strings (${RUNS.strings})`, () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 300 })),
        checkLoad,
      ),
      { numRuns: RUNS.strings },
    );
  });

  it(`never throws on YAML-looking text (${RUNS.yamlish})`, () => {
    fc.assert(fc.property(yamlish, checkLoad), { numRuns: RUNS.yamlish });
  });

  it(`never throws on mutated valid playbooks (${RUNS.mutations})`, () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...seeds),
        fc.array(mutation, { minLength: 1, maxLength: 4 }),
        (source, ms) => checkLoad(mutate(source, ms)),
      ),
      { numRuns: RUNS.mutations },
    );
  });

  it(`never throws on JSON values written as YAML (${RUNS.json})`, () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue({ maxDepth: 4 }), playbookLike), (value) =>
        checkLoad(stringify(value)),
      ),
      { numRuns: RUNS.json },
    );
  });

  it('never throws on block sequences nested 10,000 deep in 20 KB (reports them instead)', () => {
    // `- - - ... x` opens one block sequence per dash; the top-level key after it closes them all.
    const deep = `version: 1\nname: deep\non: { manual: true }\nvars:\n  a:\n    ${'- '.repeat(10_000)}x\nsteps:\n  - id: a\n    wait: 1s\n`;
    expect(() => checkLoad(deep)).to.not.throw();
    expect(loadPlaybook(deep, 'fuzz.yaml').diagnostics.map((d) => d.rule)).to.include('yaml');
  });

  it('left Object.prototype untouched', () => {
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).to.deep.equal(PROTOTYPE_KEYS);
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
    expect(({} as Record<string, unknown>).admin).to.equal(undefined);
  });
});
