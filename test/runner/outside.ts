/**
 * What the engine actions that reach outside a run (notify.webhook, report.write) reach, for the runner tests of
 * them: a webhook receiver on loopback (test/helpers/receiver.ts) and a temporary directory, set up before a
 * describe block's tests (the directory is removed when the process exits: test/helpers/temp.ts).
 */
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/temp.js';

export interface Outside {
  /** The receiver: `hook.port` to post to, `hook.bodies` what it received. */
  hook: Receiver;
  /** The temporary directory. */
  dir: string;
}

export function hookAndDir(): Outside {
  const o = {} as Outside;
  before(async () => {
    o.hook = await startReceiver();
    o.dir = tempDir('fleetbook-outside-');
  });
  after(async () => {
    await o.hook?.close();
  });
  return o;
}
