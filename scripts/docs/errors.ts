/** docs/errors.md: the errors fleetbook reports, from the error catalog and the per-device error tables. */
import { apiErrorCodes } from '../../src/actions/selectors.js';
import { ACTIONS, AREAS, CATALOG } from '../../src/api/catalog.js';
import {
  CARRIER_ERRORS,
  DEVICE_ERRORS,
  OWN_DEVICE_TYPES,
  STATE_NOT_CHANGED,
  type DeviceErrorType,
} from '../../src/api/device-errors.js';
import { classifyApiError, ERROR_CODES, SESSION_EXPIRED_MESSAGE } from '../../src/errors.js';
import { DEVICE_ERROR_MEANINGS } from './device-error-meanings.js';

const CLASS_MEANING = {
  retryable: "sent again by `retry` (and by the client for 429 and 503), within the step's budget",
  session: 'renewed by the client itself: one login, then the waiting requests replayed',
  permanent: 'fails the same way every time: retrying cannot help',
};

const STATUSES: [number, string][] = [
  [400, 'a request the service refused (see the codes below)'],
  [401, 'not authenticated, or no access to the account'],
  [403, 'forbidden'],
  [404, 'no such resource'],
  [408, 'the service timed out reading the request'],
  [409, 'a conflict with the current state'],
  [
    429,
    'over the rate limit: the area pauses for `Retry-After` and halves its rate, which then recovers; a `Retry-After` over 5 minutes is not waited for (the call fails at once, the area pauses 5 minutes)',
  ],
  [500, 'a server error'],
  [502, 'a bad gateway'],
  [503, 'unavailable'],
  [504, 'a gateway timeout'],
];

export function errorsReference(): string {
  const areas = AREAS.filter((a) => ACTIONS.some((x) => CATALOG[x].area === a));
  const lines = [
    '# Errors',
    '',
    '<!-- Written by `npm run schemas` from src/errors.ts and src/api/device-errors.ts: do not edit. -->',
    '',
    "A step fails with one of fleetbook's error codes. An API error carries the HTTP status, the code and message",
    "of the service's body, and a retry class. A device of a step that acts on devices fails on its own, with a",
    'per-device error type and its class, and the other devices go on. `retry.on` selects errors of the step,',
    '`devices.retry` and `devices.ignore` per-device error types ([playbook.md](playbook.md#retries)).',
    '',
    '## Retry classes',
    '',
    '| class | meaning |',
    '| --- | --- |',
    ...Object.entries(CLASS_MEANING).map(([c, m]) => `| \`${c}\` | ${m} |`),
    '',
    '## HTTP statuses',
    '',
    '| status | class | meaning |',
    '| --- | --- | --- |',
    ...STATUSES.map(([s, m]) => `| ${s} | \`${classifyApiError(s, 'X', '')}\` | ${m} |`),
    '',
    `Two answers are classed by their content rather than their status: the message \`${SESSION_EXPIRED_MESSAGE}\``,
    `(any status) is \`${classifyApiError(400, 'INVALID_PARAMETER', SESSION_EXPIRED_MESSAGE)}\`, and \`INTERNAL_ERROR\` "Failed to get location"`,
    `with status 400 is \`${classifyApiError(400, 'INTERNAL_ERROR', 'Failed to get location')}\`.`,
    '',
    'Some calls must not be repeated blindly (`devices.suspend`, `sms.send`: see "retry-safe" in',
    '[actions.md](actions.md)). After an unknown outcome (a 5xx, a connection lost after sending) they are not',
    'sent again; 429, 503 and a refused connection are retried for every action.',
    '',
    "The session login is the client's own: one whose answer never came (a connection lost after sending, a 5xx, a",
    'timeout) is sent again with backoff, at most 3 times in all, fewer than the five failed logins that lock the',
    'user; a refused one (401, any other 4xx) is never sent again (`FB_LOGIN`). When every attempt was lost, the call',
    "that needed the session fails with the login's error, and was not sent: a device it named is `failed`",
    '(`NETWORK`), not `unconfirmed`, and `retry.on: [network]` (or `http.5xx`) tries the step again. Such a retry,',
    'or the next call, starts another login: the logins refused or in doubt are counted across them until one',
    'succeeds, in the store (the state file or the database), by the service and user, by every process on it (a',
    'daemon, `fleetbook run`, `fleetbook call`), and after 4 none sends another (`FB_LOGIN`, "not sending another',
    'session login"), so that no wrong password, in one process or in several, locks the user. 429, 503 and a',
    'connection refused are not counted. `fleetbook logins` shows the count; `fleetbook logins clear USER` forgets',
    'it, once the password is right (a changed FLEETBOOK_PASSWORD does not: the service counts the failures of the',
    'user, whatever the password). A daemon logs `session logins stopped` once and says why in `/status`.',
    '',
    '## API error codes by area',
    '',
    "The code of the service's error body (`errorCode` or `error`), as `retry.on` names it:",
    '',
    '| area | codes |',
    '| --- | --- |',
    ...areas.map((a) => {
      const action = ACTIONS.find((x) => CATALOG[x].area === a) as string;
      const codes = apiErrorCodes(action);
      return `| \`${a}\` | ${codes ? codes.map((c) => `\`${c}\``).join(', ') : 'not listed by the spec: any code'} |`;
    }),
    '',
    "## fleetbook's error codes",
    '',
    '| code | meaning |',
    '| --- | --- |',
    ...Object.entries(ERROR_CODES).map(([c, m]) => `| \`${c}\` | ${m} |`),
    '',
    '## Per-device errors (spec section 7.3)',
    '',
    'In the results of `location.locate` and `location.createReport`, each device has a location or one of',
    'these types. A type no table lists is treated as `permanent`, never dropped. The spec writes `SVC` for the',
    'vendor prefix the service writes: a type that is one of the `SVC` rows with another one-word prefix',
    '(`ACME CACHE UNAVAILABLE`) is recorded, retried and matched by the `SVC` name.',
    '',
    '- `transient`: the device or network may answer later; retry the device as it was;',
    '- `remediable`: a changed argument fixes it (`SVC CACHE UNAVAILABLE`: `cacheMode` 1 or 2);',
    '- `permanent`: retrying the same request cannot help.',
    '',
    '| type | class | meaning |',
    '| --- | --- | --- |',
    ...(Object.entries(DEVICE_ERRORS) as [DeviceErrorType, string][]).map(
      ([t, c]) => `| \`${t}\` | \`${c}\` | ${DEVICE_ERROR_MEANINGS[t]} |`,
    ),
    '',
    '## Per-device errors of device-state actions',
    '',
    'Why the carrier did not carry out `devices.suspend`, `restore`, `activate`, `deactivate` or `changePlan` on',
    "one device: the `faultcode` of its CarrierService callback. The spec lists none; these are fleetbook's, in",
    'the style of the 7.3 table.',
    '',
    '| type | class | meaning |',
    '| --- | --- | --- |',
    ...Object.entries(CARRIER_ERRORS).map(
      ([t, c]) =>
        `| \`${t}\` | \`${c}\` | ${t === 'DEVICE DEACTIVATED' ? 'The device is deactivated; only activation applies to it.' : "The action does not apply to the device's state (suspending a pending device, activating a suspended one)."} |`,
    ),
    `| \`${STATE_NOT_CHANGED}\` | \`permanent\` | The service reports the request finished and the device is not in the target state; without its callback no reason is known. |`,
    '',
    "## fleetbook's own per-device types",
    '',
    'What fleetbook records for a device when the service gave no type of its own: a device not sent (`skipped`,',
    'no class), or a request whose outcome is unknown or failed as a whole. A whole request refused with one of',
    "fleetbook's error codes (`FB_INPUT`, ...) gives its devices that code, and an API error its code.",
    '',
    '| type | class | meaning |',
    '| --- | --- | --- |',
    ...Object.entries(OWN_DEVICE_TYPES).map(([t, [c, m]]) => `| \`${t}\` | ${c ? `\`${c}\`` : '—'} | ${m} |`),
  ];
  return `${lines.join('\n')}\n`;
}
