/**
 * What happened to a device, and what devices sent, under /m2m/v1: connection history, provisioning history,
 * and the mobile-originated SMS of an account (spec 4.5 quick reference and section 8; shapes from the vendor's
 * published SDK, docs/spec-decisions.md).
 */
import Type from 'typebox';
import { AccountName, closed, DateTime, DeviceId, KeyValues } from './common.js';

/** One device, for a period (connection and provisioning history). */
export const DeviceHistoryRequest = closed({
  deviceId: DeviceId,
  earliest: DateTime,
  latest: DateTime,
});

export const ConnectionEvent = Type.Object({
  occurredAt: Type.String(),
  connectionEventAttributes: Type.Optional(KeyValues),
  extendedAttributes: Type.Optional(KeyValues),
});
/** At most 500 events an answer, oldest first; 202 while there are more (spec section 8). */
export const ConnectionHistoryPage = Type.Object({
  hasMoreData: Type.Optional(Type.Boolean()),
  connectionHistory: Type.Array(ConnectionEvent),
});
/** Every event of the period: the client asks again from the last `occurredAt` until there are no more. */
export const ConnectionHistory = Type.Object({ connectionHistory: Type.Array(ConnectionEvent) });

export const ProvisioningEvent = Type.Object({
  occurredAt: Type.Optional(Type.String()),
  status: Type.Optional(Type.String()),
  eventBy: Type.Optional(Type.String()),
  eventType: Type.Optional(
    Type.String({ description: 'Activate, Suspend, Restore, Deactivate, Change Plan, Device Move.' }),
  ),
  mdn: Type.Optional(Type.String()),
  msisdn: Type.Optional(Type.String()),
  servicePlan: Type.Optional(Type.String({ description: 'The plan after the event.' })),
  extendedAttributes: Type.Optional(KeyValues),
});
/** An array of results, as the published SDK reads it. */
export const ProvisioningHistory = Type.Array(
  Type.Object({
    hasMoreData: Type.Optional(Type.Boolean()),
    provisioningHistory: Type.Optional(Type.Array(ProvisioningEvent)),
  }),
);

// ── mobile-originated SMS ───────────────────────────────────────────────────────────────────────

export const SmsHistoryRequest = closed({
  accountName: AccountName,
  next: Type.Optional(
    Type.Integer({ minimum: 0, description: 'Resume from this token; every later page is read.' }),
  ),
});
export const SmsMessage = Type.Object({
  deviceIds: Type.Optional(Type.Array(Type.Object({ id: Type.String(), kind: Type.String() }))),
  message: Type.Optional(Type.String()),
  timestamp: Type.Optional(Type.String({ description: 'When the service received the message.' })),
});
/** Up to 100 messages an answer; 202 and a `Location` ending in `?next=<token>` while there are more. */
export const SmsHistoryPage = Type.Object({
  hasMoreData: Type.Optional(Type.Boolean()),
  messages: Type.Array(SmsMessage),
});
export const SmsHistory = Type.Object({ messages: Type.Array(SmsMessage) });

export const StartSmsCallbacksRequest = closed({ accountName: AccountName });

/** `{ success: true }`: the answer of startCallbacks. */
export { Success as SuccessResult } from './common.js';
