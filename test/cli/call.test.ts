/**
 * `fleetbook call` as a user runs it: the built binary in a child process against a loopback server.
 * `npm test` builds dist/ before mocha runs.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { Recorder } from '../helpers/recorder.js';
import { tempDir } from '../helpers/temp.js';

describe('fleetbook call', () => {
  let rec: Recorder;
  let env: Record<string, string>;
  const body = { accountName: '0000123456-00001', devices: [{ id: '490154203237518', kind: 'imei' }] };

  beforeEach(async () => {
    rec = await Recorder.start({ username: 'ops', password: 'pw-cli-test-secret' });
    env = {
      FLEETBOOK_API_URL: rec.baseUrl,
      FLEETBOOK_CLIENT_ID: rec.credentials.clientId,
      FLEETBOOK_CLIENT_SECRET: rec.credentials.clientSecret,
      FLEETBOOK_USERNAME: 'ops',
      FLEETBOOK_PASSWORD: 'pw-cli-test-secret',
    };
  });
  afterEach(() => rec.close());

  it('prints the response on stdout and exits 0, having sent the right method, path and body', async () => {
    rec.enqueue('POST /api/m2m/v1/devices/actions/suspend', { status: 200, body: { requestId: 'req-1' } });
    const r = await fleetbook(['call', 'devices.suspend', '--body', JSON.stringify(body)], env);
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout)).to.deep.equal({ requestId: 'req-1' });
    const [sent] = rec.requestsTo('/api/m2m/v1/devices/actions/suspend');
    expect(sent?.method).to.equal('POST');
    expect(sent?.body).to.deep.equal({
      accountName: '0000123456-00001',
      devices: [{ deviceIds: [{ id: '490154203237518', kind: 'imei' }] }],
    });
  });

  it('reads the input from --body-file', async () => {
    const dir = tempDir('fleetbook-call-');
    const file = join(dir, 'body.json');
    await writeFile(file, JSON.stringify({ accountName: '0000123456-00001', txid: 'tx-9' }));
    rec.enqueue('GET /api/loc/v1/locationreports/0000123456-00001/report/tx-9/status', {
      body: { txid: 'tx-9', status: 'QUEUED' },
    });
    const r = await fleetbook(['call', 'location.getReportStatus', '--body-file', file], env);
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout)).to.deep.equal({ txid: 'tx-9', status: 'QUEUED' });
  });

  it('prints an API error as JSON on stderr and exits 1', async () => {
    rec.enqueue('POST /api/m2m/v1/devices/actions/suspend', {
      status: 400,
      body: { errorCode: 'INVALID_PARAMETER', errorMessage: 'Invalid account name' },
    });
    const r = await fleetbook(['call', 'devices.suspend', '--body', JSON.stringify(body)], env);
    expect(r.code).to.equal(1);
    expect(r.stdout).to.equal('');
    const err = JSON.parse(r.stderr) as Record<string, unknown>;
    expect(err).to.include({
      status: 400,
      code: 'INVALID_PARAMETER',
      message: 'Invalid account name',
      action: 'devices.suspend',
      retryClass: 'permanent',
    });
  });

  it('rejects an input that fails the schema with every problem and its JSON path, exit 2, nothing sent', async () => {
    const bad = { accountName: '123', deviceList: [{ id: '1', kind: 'imei' }], cacheMode: '5' };
    const r = await fleetbook(['call', 'location.createReport', '--body', JSON.stringify(bad)], env);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.include('/accountName');
    expect(r.stderr).to.include('/deviceList/0/id');
    expect(r.stderr).to.include('/cacheMode: cacheMode must be one of "0", "1", "2"');
    expect(rec.requests).to.have.length(0);
  });

  it('names close actions for an unknown one and exits 2', async () => {
    const r = await fleetbook(['call', 'devices.suspnd', '--body', '{}'], env);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.include('unknown action `devices.suspnd`');
    expect(r.stderr).to.include('`devices.suspend`');
    expect(rec.requests).to.have.length(0);
  });

  it('exits 2 on malformed JSON and on --body with --body-file', async () => {
    expect((await fleetbook(['call', 'devices.suspend', '--body', '{nope'], env)).code).to.equal(2);
    expect(
      (await fleetbook(['call', 'devices.suspend', '--body', '{}', '--body-file', 'x.json'], env)).code,
    ).to.equal(2);
    expect(rec.requests).to.have.length(0);
  });

  it('never shows the password, even when the login is refused', async () => {
    await rec.close();
    rec = await Recorder.start({ username: 'ops', password: 'the-right-password' });
    const r = await fleetbook(['call', 'devices.suspend', '--body', JSON.stringify(body)], {
      ...env,
      FLEETBOOK_API_URL: rec.baseUrl,
      FLEETBOOK_LOG_LEVEL: 'debug',
    });
    expect(r.code).to.equal(1);
    expect(JSON.parse(r.stderr.trim().split('\n').pop() as string)).to.include({
      code: 'FB_LOGIN',
      retryClass: 'permanent',
    });
    expect(r.stderr + r.stdout).not.to.include('pw-cli-test-secret');
    expect(rec.requestsTo('/api/m2m/v1/session/login')).to.have.length(1);
  });
});

describe('fleetbook with no configuration', () => {
  it('call: without FLEETBOOK_API_URL it calls an embedded emulator with its default world', async () => {
    const r = await fleetbook(['call', 'devices.list', '--body', '{"accountName":"0000123456-00001"}'], {});
    expect(r.code, r.stderr).to.equal(0);
    const out = JSON.parse(r.stdout) as { devices: { accountName: string }[] };
    expect(out.devices.length).to.be.greaterThan(0);
    expect(out.devices.every((d) => d.accountName === '0000123456-00001')).to.equal(true);
  });

  it('call: says that FLEETBOOK_RATE and FLEETBOOK_CONCURRENCY do not apply to the embedded emulator', async () => {
    const body = ['--body', '{"accountName":"0000123456-00001"}'];
    const r = await fleetbook(['call', 'devices.list', ...body], {
      FLEETBOOK_RATE: '5',
      FLEETBOOK_CONCURRENCY: '2',
      FLEETBOOK_LOG_LEVEL: 'warn',
    });
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stderr).to.include(
      'FLEETBOOK_RATE and FLEETBOOK_CONCURRENCY not used: the embedded emulator is called at 10,000 requests/s, 64 at once',
    );
    const quiet = await fleetbook(['call', 'devices.list', ...body], { FLEETBOOK_LOG_LEVEL: 'warn' });
    expect(quiet.stderr).to.equal('');
  });

  it('schema: prints the playbook JSON Schema, which ajv compiles and which accepts the examples', async () => {
    const r = await fleetbook(['schema'], {});
    expect(r.code, r.stderr).to.equal(0);
    const { $id: _id, ...schema } = JSON.parse(r.stdout) as Record<string, unknown>;
    const { explainingAjv } = await import('../../src/api/validate.js');
    const validate = explainingAjv().compile(schema);
    const { parse } = await import('yaml');
    const { readFile } = await import('node:fs/promises');
    const example = parse(
      await readFile(
        join(import.meta.dirname, '..', '..', 'playbooks', 'nightly-location-report.yaml'),
        'utf8',
      ),
    );
    expect(validate(example), JSON.stringify(validate.errors)).to.equal(true);
  });
});
