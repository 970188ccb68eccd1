/**
 * `fleetbook logins` and `fleetbook logins clear USER`: the session logins that may have failed, counted in the
 * store by every process on it (api/login-count.ts), and the operator's word that a user may log in again once
 * its password is right. Five consecutive failed logins lock the user; each process stops at four.
 */
import { LOGINS_IN_DOUBT } from '../api/credentials.js';
import { byUser, serviceKey, type UserLogins } from '../api/login-count.js';
import { aligned, withStore } from './store-access.js';
import { EXIT_USAGE } from './exit-codes.js';

const STOPS = `Each process on the store stops before a fifth (after ${LOGINS_IN_DOUBT}): the service locks a user after five consecutive failed logins.`;

/** `fleetbook logins [--json]`: each user's count, by service. */
export async function listLogins(flags: { json?: boolean; state?: string }): Promise<number> {
  return withStore(flags, async (store) => {
    const users = byUser(await store.logins.list(), LOGINS_IN_DOUBT);
    if (flags.json) process.stdout.write(`${JSON.stringify(users, null, 2)}\n`);
    else if (!users.length)
      process.stdout.write('no session logins counted: none failed since the last that succeeded\n');
    else
      process.stdout.write(
        `${table(users)}\n${STOPS}\nOnce the password is right: fleetbook logins clear USER\n`,
      );
    return 0;
  });
}

/**
 * `fleetbook logins clear USER [--service URL]`: forgets the user's count on every service, or on the one named.
 * A service the store has no count of the user for is refused (exit 2), naming those it has: a typo must not
 * read as a count cleared.
 */
export async function clearLogins(
  username: string,
  flags: { service?: string; state?: string } = {},
): Promise<number> {
  if (username.trim() === '') {
    process.stderr.write(
      'fleetbook: the user name is empty: give the FLEETBOOK_USERNAME whose count to clear\n',
    );
    return EXIT_USAGE;
  }
  const service = flags.service === undefined ? undefined : serviceOf(flags.service);
  if (service === null) {
    process.stderr.write(
      `fleetbook: --service ${JSON.stringify(flags.service)} is not a URL: give the service's URL (FLEETBOOK_API_URL), as \`fleetbook logins\` lists it\n`,
    );
    return EXIT_USAGE;
  }
  return withStore(flags, async (store) => {
    if (service !== undefined) {
      const services = [
        ...new Set((await store.logins.list()).filter((r) => r.username === username).map((r) => r.service)),
      ];
      if (!services.includes(service)) {
        process.stderr.write(
          `fleetbook: no session logins counted for ${username} on ${service}: ` +
            (services.length
              ? `the store counts them on ${services.join(', ')}\n`
              : `the store counts none for ${username}\n`),
        );
        return EXIT_USAGE;
      }
    }
    const gone = byUser(await store.logins.clear(username, service), LOGINS_IN_DOUBT);
    if (!gone.length) process.stdout.write(`no session logins counted for ${username}: nothing to clear\n`);
    for (const u of gone)
      process.stdout.write(
        `cleared ${u.failed} login${u.failed === 1 ? '' : 's'} of ${u.username} on ${u.service}: the processes on the store log in as ${u.username} again. ` +
          `Up to ${u.failed} of them may have failed, and the service counts those until a login succeeds: the next must.\n`,
      );
    return 0;
  });
}

/** A service as the count names it (serviceKey); null: no http(s) URL. */
function serviceOf(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  return serviceKey(url);
}

function table(users: UserLogins[]): string {
  const rows = [
    ['SERVICE', 'USER', 'FAILED', 'STATE', 'LAST'],
    ...users.map((u) => {
      const last = u.logins[u.logins.length - 1];
      const what = last?.state === 'sending' ? 'no answer yet' : `${last?.state}: ${last?.error ?? ''}`;
      return [
        u.service,
        u.username,
        String(u.failed),
        u.stopped ? 'stopped' : 'counting',
        last ? `${last.sentAt} ${what}` : '',
      ];
    }),
  ];
  return aligned(rows);
}
