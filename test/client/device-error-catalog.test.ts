/**
 * The per-device error catalog (spec section 7.3) matches the spec table row for row: the same type strings,
 * in the same order, each with a class.
 *
 * test/fixtures/spec-7.3.md is the section copied from ../shared/spec/service-spec.md, so that this test runs in
 * a clone without ../shared. The copy is kept as Prettier formats it (the repository's `prettier --check` covers
 * it), which pads the table cells and changes nothing else; where the spec is present, the fixture must equal
 * the spec's section once formatted the same way.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { format, resolveConfig } from 'prettier';
import {
  DEVICE_ERRORS,
  DEVICE_ERROR_TYPES,
  deviceErrorClass,
  isDeviceErrorType,
  specErrorType,
} from '../../src/api/device-errors.js';

const root = join(import.meta.dirname, '..', '..');
const FIXTURE = join(root, 'test', 'fixtures', 'spec-7.3.md');
const SPEC = join(root, '..', 'shared', 'spec', 'service-spec.md');
const HEADING = '### 7.3 Per-device errors';
/** Where the classes are documented for users. */
const DOCS = join(root, 'docs', 'errors.md');

/** The section from its heading to the next heading of the same or a higher level. */
function section(markdown: string): string {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.trim() === HEADING);
  if (start < 0) throw new Error(`no "${HEADING}" section`);
  let end = lines.findIndex((l, i) => i > start && /^#{1,3} /.test(l));
  if (end < 0) end = lines.length;
  return lines.slice(start, end).join('\n').trimEnd() + '\n';
}

/** The rows of the table whose header is `header`, as their cells: [type, meaning] by default. */
function rows(markdown: string, header = ['Error type', 'Meaning']): [string, ...string[]][] {
  const cells = (line: string) =>
    line
      .trim()
      .slice(1, -1)
      .split('|')
      .map((c) => c.trim());
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.trim().startsWith('|') && cells(l).join('|') === header.join('|'));
  expect(start, `a table headed ${header.join(' | ')}`).to.be.at.least(0);
  const rule = lines[start + 1] ?? '';
  expect(rule, 'table rule').to.match(/^\|([\s:-]+\|)+$/);
  const body = lines.slice(start + 2);
  const end = body.findIndex((l) => !l.trim().startsWith('|'));
  return body.slice(0, end < 0 ? body.length : end).map((l) => {
    const row = cells(l);
    expect(row, l).to.have.length(header.length);
    return row as [string, ...string[]];
  });
}

async function prettierMarkdown(text: string, at: string): Promise<string> {
  const options = (await resolveConfig(at)) ?? {};
  return format(text, { ...options, parser: 'markdown' });
}

describe('per-device error catalog (spec 7.3)', () => {
  let fixture: string;
  before(async () => {
    fixture = await readFile(FIXTURE, 'utf8');
  });

  it('the fixture is the spec section (checked where ../shared/spec/service-spec.md is present)', async () => {
    // A clone without ../shared has only the fixture, which the tests below read.
    if (!existsSync(SPEC)) return;
    const spec = section(await readFile(SPEC, 'utf8'));
    expect(fixture).to.equal(await prettierMarkdown(spec, FIXTURE));
    // And cell for cell, whatever the padding.
    expect(rows(fixture)).to.deep.equal(rows(spec));
  });

  it('DEVICE_ERRORS has exactly the types of the table, row for row, in order', () => {
    const types = rows(fixture).map(([type]) => type);
    expect(types).to.have.length(36);
    expect(Object.keys(DEVICE_ERRORS)).to.deep.equal(types);
    expect(DEVICE_ERROR_TYPES).to.deep.equal(types);
  });

  it('gives every type a class: transient, remediable or permanent', () => {
    for (const [type] of rows(fixture)) {
      expect(isDeviceErrorType(type), type).to.equal(true);
      expect(deviceErrorClass(type), type).to.be.oneOf(['transient', 'remediable', 'permanent']);
    }
  });

  it('classes the types product.md names as it says', () => {
    const expected: Record<string, string> = {
      'ABSENT SUBSCRIBER': 'transient',
      TIMEOUT: 'transient',
      'CONGESTION IN LOCATION SERVER': 'transient',
      'CONGESTION IN MOBILE NETWORK': 'transient',
      'SYSTEM FAILURE': 'transient',
      'POSITION METHOD FAILURE': 'transient',
      'SVC CACHE UNAVAILABLE': 'remediable',
      'SVC CONSENT CHECK FAILED': 'permanent',
      'SVC DEVICE TYPE CHECK FAILED': 'permanent',
      'UNKNOWN SUBSCRIBER': 'permanent',
      'POSITIONING NOT ALLOWED': 'permanent',
      'DISALLOWED BY LOCAL REGULATIONS': 'permanent',
    };
    for (const [type, cls] of Object.entries(expected)) expect(deviceErrorClass(type), type).to.equal(cls);
    // The only remediable one is the cache, fixed by cacheMode 1 or 2.
    expect(Object.entries(DEVICE_ERRORS).filter(([, c]) => c === 'remediable')).to.deep.equal([
      ['SVC CACHE UNAVAILABLE', 'remediable'],
    ]);
  });

  it('docs/errors.md lists every type with its class, row for row', async () => {
    const documented = rows(await readFile(DOCS, 'utf8'), ['type', 'class', 'meaning']).map((cells) =>
      cells.slice(0, 2).map((c) => c.replaceAll('`', '')),
    );
    expect(documented).to.deep.equal(rows(fixture).map(([type]) => [type, deviceErrorClass(type)]));
    expect(documented.map(([type]) => type)).to.include('SVC DEVICE DATA UNAVAILABLE');
  });

  it('a type the spec does not list is permanent, never dropped', () => {
    expect(isDeviceErrorType('SVC SOMETHING NEW')).to.equal(false);
    expect(deviceErrorClass('SVC SOMETHING NEW')).to.equal('permanent');
    // Exact strings: no case folding.
    expect(isDeviceErrorType('timeout')).to.equal(false);
  });

  it('reads a one-word vendor prefix as SVC, for the rows that start with SVC only', () => {
    const read = (types: string[]) => types.map(specErrorType);
    expect(read(['ACME CACHE UNAVAILABLE', 'VZ DEVICE LOCATION DATA UNAVAILABLE'])).to.deep.equal([
      'SVC CACHE UNAVAILABLE',
      'SVC DEVICE LOCATION DATA UNAVAILABLE',
    ]);
    const kept = [
      'SVC CONSENT CHECK FAILED',
      'ACME SYSTEM FAILURE',
      'ACME UNKNOWN SUBSCRIBER',
      'CACHE UNAVAILABLE',
      'ACME CORP CACHE UNAVAILABLE',
      'ACME cache unavailable',
      'TIMEOUT',
    ];
    expect(read(kept)).to.deep.equal(kept);
  });
});
