/**
 * Every documented callback example, posted to `fleetbook serve` (the built binary, a child process, over
 * loopback, with a real SQLite file), is acknowledged and stored as the message of its own service: on the
 * catch-all route `POST /callbacks`, which reads the service from the body, and on the route of its service,
 * `POST /callbacks/{service}`. The store is read back with a read-only connection of its own.
 *
 * The bodies are read from the docs, not retyped: docs/events.md documents one example of each of the eleven
 * services (written from src/events/examples.ts). service-spec.md shows the payload of no service but the price
 * plan alert's (section 6, a field table, which DeviceUsage's example follows); public-api-facts.md
 * ("Connectivity callbacks") gives the envelope and a CarrierService example, copied below with its section.
 *
 * Before, five of the eleven were refused on `POST /callbacks` ("no one service sends `profileResponse`
 * messages": the schemas of the six services of spec 2.14 named no payload member) and the
 * ExternalProvisioningChanges example was stored as CarrierService (it reported a `restoreResponse`, which
 * CarrierService sends).
 */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { EVENT_SERVICES } from '../../src/events/index.js';
import { emulatorEnv } from '../helpers/cli.js';
import { DaemonProcess } from '../helpers/daemon.js';
import { codeBlocks } from '../helpers/markdown.js';
import { tempDir } from '../helpers/temp.js';

type Json = Record<string, unknown>;

const ROOT = join(import.meta.dirname, '..', '..');
const CB_USER = 'examples-listener';
const CB_PASS = 'examples-pass-Q7x2';
const CB_SECRET = 'examples-hmac-secret-8Jd3';

/** The example of each service in docs/events.md: the JSON block of its `## Service` section. */
function documentedExamples(): Map<string, Json> {
  const examples = new Map<string, Json>();
  const sections = readFileSync(join(ROOT, 'docs', 'events.md'), 'utf8')
    .split(/^## /m)
    .slice(1);
  for (const section of sections) {
    const service = section.slice(0, section.indexOf('\n')).trim();
    const blocks = codeBlocks(section, /json/);
    expect(blocks, `the example of ${service} in docs/events.md`).to.have.length(1);
    examples.set(service, JSON.parse((blocks[0] as { text: string }).text) as Json);
  }
  return examples;
}

/**
 * public-api-facts.md, "Connectivity callbacks": the envelope `{ username, password, requestId, deviceIds: [ {
 * id, kind } ], <xxxResponse object>, status?, callbackCount, maxCallbackThreshold }`, and "Example for
 * CarrierService: `deviceResponse.changeIdentifierResponse`, `status: "Success"`, `callbackCount: 1`,
 * `maxCallbackThreshold: 4`". The request id and the device are ours; the payload's members are not shown.
 */
const FACTS_CARRIER_EXAMPLE: Json = {
  requestId: 'c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f',
  deviceIds: [{ id: '990000862471854', kind: 'IMEI' }],
  deviceResponse: { changeIdentifierResponse: {} },
  status: 'Success',
};

/**
 * The message as the service posts it: the listener's credentials and the delivery counters around the event;
 * a Location message carries no credentials but is signed (the header's value returned beside it).
 */
function posted(service: string, event: Json): { raw: string; headers: Record<string, string> } {
  const counters = { callbackCount: 1, maxCallbackThreshold: 4 };
  if (service === 'Location') {
    const raw = JSON.stringify({ ...event, ...counters });
    const signature = `sha256=${createHmac('sha256', CB_SECRET).update(raw).digest('hex')}`;
    return { raw, headers: { 'x-fleetbook-signature': signature } };
  }
  return {
    raw: JSON.stringify({ username: CB_USER, password: CB_PASS, ...event, ...counters }),
    headers: {},
  };
}

async function post(url: string, body: { raw: string; headers: Record<string, string> }) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...body.headers },
    body: body.raw,
  });
  return { status: res.status, text: await res.text() };
}

describe('the documented callback examples, posted to fleetbook serve', function () {
  this.timeout(60_000);
  let emu: Emulator;
  let daemon: DaemonProcess;
  let state: string;

  before(async () => {
    emu = await startEmulator({ port: 0, timeScale: 0 });
    state = join(tempDir('fleetbook-cb-examples-'), 'state.db');
    daemon = await DaemonProcess.start('examples daemon', {
      playbooks: join(ROOT, 'test', 'fixtures', 'daemon-callback-examples'),
      state,
      env: {
        ...emulatorEnv(emu),
        FLEETBOOK_CALLBACK_USERNAME: CB_USER,
        FLEETBOOK_CALLBACK_PASSWORD: CB_PASS,
        FLEETBOOK_CALLBACK_SECRET: CB_SECRET,
      },
    });
  });

  after(async () => {
    await daemon?.kill();
    await emu?.close();
  });

  /** The inbox rows of `requestId`, read from the file. */
  function stored(requestId: string): { service: string; kind: string; payload: Json }[] {
    const db = new Database(state, { readonly: true, fileMustExist: true });
    try {
      return (
        db.prepare('SELECT service, kind, payload_json FROM inbox WHERE request_id = ?').all(requestId) as {
          service: string;
          kind: string;
          payload_json: string;
        }[]
      ).map((r) => ({ service: r.service, kind: r.kind, payload: JSON.parse(r.payload_json) as Json }));
    } finally {
      db.close();
    }
  }

  const examples = documentedExamples();
  const cases: [string, string, Json][] = [
    ...[...examples].map(([service, event]): [string, string, Json] => [
      `the ${service} example of docs/events.md`,
      service,
      event,
    ]),
    ['the CarrierService example of public-api-facts.md', 'CarrierService', FACTS_CARRIER_EXAMPLE],
  ];

  it('documents an example of each of the eleven services', () => {
    expect([...examples.keys()]).to.deep.equal([...EVENT_SERVICES]);
  });

  for (const [name, service, event] of cases) {
    it(`stores ${name} as ${service}, posted to /callbacks and to /callbacks/${service}`, async () => {
      const generic = await post(`${daemon.url}/callbacks`, posted(service, event));
      expect(generic, 'POST /callbacks').to.deep.equal({ status: 200, text: '{"status":"stored"}' });
      const kind = Object.keys((event.deviceResponse as Json | undefined) ?? event).find((k) =>
        k.endsWith('Response'),
      );
      expect(stored(event.requestId as string)).to.deep.equal([{ service, kind, payload: event }]);

      // The route of its service, with a request id of its own (the first is stored: this would be its duplicate).
      const again = { ...event, requestId: `${String(event.requestId)}-route` };
      const routed = await post(`${daemon.url}/callbacks/${service}`, posted(service, again));
      expect(routed, `POST /callbacks/${service}`).to.deep.equal({
        status: 200,
        text: '{"status":"stored"}',
      });
      expect(stored(again.requestId)).to.deep.equal([{ service, kind, payload: again }]);
    });
  }
});
