/**
 * Every request an area lets start goes out at once: the client's connections to the service are as many as
 * its areas let be in flight together. Fewer, and a request the rate budget counted at its start would wait for
 * a connection and leave later, with the next ones (docs/replicas.md: the budget at the service).
 */
import { expect } from 'chai';
import { createClient, type Client } from '../../src/api/client.js';
import { FAST_RATES, Recorder } from '../helpers/recorder.js';

const ACC = '0000123456-00001';
const IN_FLIGHT = 100;

describe('client connections', () => {
  let rec: Recorder;
  let client: Client;

  beforeEach(async () => {
    rec = await Recorder.start();
    client = createClient({
      baseUrl: rec.baseUrl,
      ...rec.credentials,
      rates: { ...FAST_RATES, loc: { requestsPerSecond: 100_000, concurrency: IN_FLIGHT } },
    });
  });
  afterEach(async () => {
    await client.close();
    await rec.close();
  });

  it(`has ${IN_FLIGHT} requests of an area of concurrency ${IN_FLIGHT} at the service at once`, async () => {
    await client.location.getReportStatus({ accountName: ACC, txid: 'warm-up' });
    let arrived = 0;
    let release: () => void = () => undefined;
    const released = new Promise<void>((r) => (release = r));
    rec.handle(/^GET \/api\/loc\/v1\/locationreports\//, async (r) => {
      arrived++;
      await released;
      return { status: 200, body: { txid: r.path.split('/')[7], status: 'COMPLETED' } };
    });
    const answers = Promise.all(
      Array.from({ length: IN_FLIGHT }, (_, i) =>
        client.location.getReportStatus({ accountName: ACC, txid: `tx-${i}` }),
      ),
    );
    // Held at the service until every one has arrived: a request waiting for a connection never does.
    for (let waited = 0; arrived < IN_FLIGHT && waited < 3_000; waited += 10)
      await new Promise((r) => setTimeout(r, 10));
    const atOnce = arrived;
    release();
    expect((await answers).length).to.equal(IN_FLIGHT);
    expect(atOnce, 'requests at the service at once').to.equal(IN_FLIGHT);
  });
});
