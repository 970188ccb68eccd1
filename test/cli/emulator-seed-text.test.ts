/**
 * A seed is a number or a word, and a number is its decimal text: `fleetbook emulator --seed S` gives the world
 * that a reset to the text S gives (child processes of the built CLI; dist/ must be built). The flag read every
 * run of digits as a number, so that `--seed 007` gave the world of 7, not of "007" as `POST /_emulator/reset`
 * does, and `--seed 9007199254740993`, past the integers a number holds, gave the world of 9007199254740992.
 */
import { expect } from 'chai';
import { startEmulator } from '../../src/emulator/index.js';
import { emulatorBanner } from '../helpers/cli.js';

/** The seed line and the first account of the banner of `fleetbook emulator --seed seed`. */
async function bannerOf(seed: string): Promise<string[]> {
  const out = await emulatorBanner(['--accounts', '1', '--seed', seed]);
  return [out.match(/^ {2}seed {14}(.*?):/m)?.[1] ?? '', out.match(/^ {20}(\S+) \(primary/m)?.[1] ?? ''];
}

describe('fleetbook emulator --seed: the text given is the seed (child process)', function () {
  this.timeout(60_000);

  for (const seed of ['007', '9007199254740993', 'abc', '42'])
    it(`--seed ${seed} gives the world of a reset to ${JSON.stringify(seed)}`, async () => {
      const emu = await startEmulator({ port: 0, accounts: 1, timeScale: 0 });
      let account: string;
      try {
        const r = await fetch(`${emu.url}/_emulator/reset`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ seed }),
        });
        account = ((await r.json()) as { accounts: string[] }).accounts[0]!;
      } finally {
        await emu.close();
      }
      expect(await bannerOf(seed)).to.deep.equal([seed, account]);
    });
});
