/**
 * Preloaded into a child process (`node --import`): every HTTP request its undici clients make carries, in the
 * header REQUEST_START_HEADER, the wall clock (Date.now(), the rate budget's clock) when the request was made.
 * The API client makes it in the turn its rate budget lets it start (rate/area.ts), so a server of the same host
 * reads, beside the request, how long it was held between its start and its arrival.
 */
import { subscribe } from 'node:diagnostics_channel';

const REQUEST_START_HEADER = 'x-fleetbook-test-started';

subscribe('undici:request:create', (message) => {
  message.request.addHeader(REQUEST_START_HEADER, String(Date.now()));
});
