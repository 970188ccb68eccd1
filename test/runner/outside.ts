/**
 * What the engine actions that reach outside a run (notify.webhook, report.write) reach, for the runner tests of
 * them: a webhook receiver on loopback (test/helpers/receiver.ts) and a temporary directory, set up before a
 * describe block's tests and gone after them.
 */
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { tempDir } from './helpers.js';

export interface Outside {
  /** The receiver: `hook.port` to post to, `hook.bodies` what it received. */
  hook: Receiver;
  /** The temporary directory. */
  dir: string;
}

export function hookAndDir(): Outside {
  const o = {} as Outside;
  let tmp: { dir: string; close(): Promise<void> } | undefined;
  before(async () => {
    o.hook = await startReceiver();
    tmp = await tempDir();
    o.dir = tmp.dir;
  });
  after(async () => {
    await o.hook?.close();
    await tmp?.close();
  });
  return o;
}
