/**
 * The generated reference of docs/ (scripts/docs/): up to date with the catalog, the schemas, the error tables
 * and the events (run `npm run schemas` when this fails), and complete.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DOCS, renderDoc } from '../../scripts/docs/index.js';
import { ALL_ACTIONS } from '../../src/cli/actions-reference.js';
import { CARRIER_ERROR_TYPES, DEVICE_ERRORS } from '../../src/api/device-errors.js';
import { EVENT_SERVICES } from '../../src/events/index.js';
import { ERROR_CODES } from '../../src/errors.js';
import { RULES } from '../../src/playbook/diagnostics.js';

const DOCS_DIR = join(import.meta.dirname, '..', '..', 'docs');
const read = (name: string) => readFileSync(join(DOCS_DIR, name), 'utf8');

describe('docs/: the generated reference', function () {
  this.timeout(60_000);

  for (const name of Object.keys(DOCS)) {
    it(`docs/${name} is up to date (run \`npm run schemas\` when this fails)`, async () => {
      expect(read(name)).to.equal(await renderDoc(name, join(DOCS_DIR, name)));
    });
  }

  it('actions.md has a section for every action', () => {
    const text = read('actions.md');
    for (const action of ALL_ACTIONS) expect(text, action).to.include(`### \`${action}\``);
  });

  it('errors.md lists every 7.3 type with its class, the carrier codes and every fleetbook code', () => {
    const text = read('errors.md');
    const row = (type: string, cls: string) =>
      new RegExp(`\\| \`${type.replace(/[/]/g, '\\/')}\` +\\| \`${cls}\` +\\|`);
    for (const [type, cls] of Object.entries(DEVICE_ERRORS)) expect(text, type).to.match(row(type, cls));
    expect(text).to.match(row('SVC DEVICE DATA UNAVAILABLE', 'permanent'));
    for (const type of CARRIER_ERROR_TYPES) expect(text, type).to.include(`\`${type}\``);
    for (const code of Object.keys(ERROR_CODES)) expect(text, code).to.include(`\`${code}\``);
    for (const status of [400, 401, 408, 429, 500, 503])
      expect(text).to.match(new RegExp(`\\| ${status} +\\|`));
  });

  it('events.md has every callback service, with its members and an example', () => {
    const text = read('events.md');
    for (const service of EVENT_SERVICES) expect(text, service).to.include(`## ${service}`);
    expect(text).to.include('`deviceResponse.alertServiceResponse.payAsYouGo.deviceIds`');
  });

  it('playbook.md has every validation rule and the members of every step kind', () => {
    const text = read('playbook.md');
    for (const rule of Object.keys(RULES)) expect(text, rule).to.include(`\`${rule}\``);
    for (const kind of ['uses', 'forEach', 'parallel', 'wait', 'set', 'fail'])
      expect(text).to.include(`**${kind}**`);
    expect(text).to.not.include('<!-- generated:');
  });
});
