/** Logging in and out: the client does it by itself. */
import { C } from './load-schemas.js';
import type { Operation } from './operation.js';

export const SESSION = {
  'session.login': {
    action: 'session.login',
    summary: 'Log in; returns a session token (the client does this by itself).',
    area: 'm2m',
    method: 'POST',
    path: '/m2m/v1/session/login',
    get input() {
      return C().LoginRequest;
    },
    get output() {
      return C().LoginResponse;
    },
    mutating: false,
    // Five consecutive failed logins lock the user: a step never sends it again on an unknown outcome. The client
    // sends its own logins again when their answer was lost, a bounded number of times (client.ts LOGIN_ATTEMPTS).
    retrySafe: false,
    errorShape: 'errorCode',
  },
  'session.logout': {
    action: 'session.logout',
    summary: 'End the current session.',
    area: 'm2m',
    method: 'POST',
    path: '/m2m/v1/session/logout',
    get input() {
      return C().LogoutRequest;
    },
    get output() {
      return C().LogoutResponse;
    },
    mutating: false,
    retrySafe: true,
    errorShape: 'errorCode',
  },
} as const satisfies Record<string, Operation>;
