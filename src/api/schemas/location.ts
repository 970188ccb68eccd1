/** Device location: exclusions, synchronous locate, reports, location callbacks (spec 2.3, 2.4, 4.2; facts). */
import Type from 'typebox';
import { AccountName, closed, ID_PATTERNS, kindEnum, idFormats } from './common.js';
import { MAX_EXCLUSIONS, MAX_REPORT_DEVICES } from '../limits.js';


/** A device of a location request. The shape says `imei`; the error messages also accept MEID and ESN. */
export const LocationDevice = closed(
  {
    id: Type.String({ minLength: 1 }),
    kind: Type.String({ enum: kindEnum(['imei', 'meid', 'esn']), description: 'imei, meid or esn.' }),
    mdn: Type.Optional(Type.String({ pattern: ID_PATTERNS.mdn, description: '10-digit device number.' })),
  },
  idFormats(['imei', 'meid', 'esn']),
);
export type LocationDevice = Type.Static<typeof LocationDevice>;

const locationRequest = (maxItems: number | undefined) =>
  closed({
    accountName: AccountName,
    deviceList: Type.Array(LocationDevice, {
      minItems: 1,
      ...(maxItems ? { maxItems } : {}),
      'x-uniqueBy': 'id',
      description: 'Devices to locate, each once.',
    }),
    accuracyMode: Type.Optional(
      Type.String({ enum: ['0'], description: '"0" (coarse) is the only supported value; "1" is reserved.' }),
    ),
    cacheMode: Type.Optional(
      Type.String({
        enum: ['0', '1', '2'],
        description: '"0" cached (default), "1" cached or current, "2" current.',
      }),
    ),
  });

export const LocateRequest = locationRequest(MAX_REPORT_DEVICES);
/** One request as sent. */
export const CreateReportRequest = locationRequest(MAX_REPORT_DEVICES);
/** What `location.createReport` takes: any number of devices, sent in batches of at most 10,000. */
export const CreateReportInput = locationRequest(undefined);

/** A per-device result of a locate or a report (public-api-facts.md). */
export const LocationEntry = Type.Object({
  msid: Type.String(),
  pd: Type.Object({
    time: Type.Optional(Type.String({ description: 'YYYYMMDDhhmmss' })),
    x: Type.Optional(Type.String({ description: 'latitude' })),
    y: Type.Optional(Type.String({ description: 'longitude' })),
    radius: Type.Optional(Type.String({ description: 'metres' })),
    qos: Type.Optional(Type.Boolean()),
    utcoffset: Type.Optional(Type.String()),
  }),
  error: Type.Object({
    time: Type.Optional(Type.String()),
    type: Type.Optional(Type.String({ description: 'A per-device error type of spec section 7.3.' })),
    info: Type.Optional(Type.String()),
  }),
});
export type LocationEntry = Type.Static<typeof LocationEntry>;
export const LocateResponse = Type.Array(LocationEntry);

const ReportStatus = Type.String({ enum: ['QUEUED', 'INPROGRESS', 'COMPLETED'] });
export const CreateReportResponse = Type.Object({
  txid: Type.String(),
  status: ReportStatus,
  estimatedDuration: Type.Optional(Type.String({ description: 'Estimated minutes to complete.' })),
});
/** The action's result: one response per batch of at most 10,000 devices, in order. */
export const CreateReportResult = Type.Object({
  reports: Type.Array(
    Type.Object({
      txid: Type.String(),
      status: ReportStatus,
      estimatedDuration: Type.Optional(Type.String()),
      devices: Type.Integer({ description: 'How many devices this batch carried.' }),
    }),
  ),
});

const ReportRef = { accountName: AccountName, txid: Type.String({ minLength: 1 }) };
export const ReportRefRequest = closed(ReportRef);
export const ReportStatusResponse = Type.Object({ txid: Type.String(), status: ReportStatus });
export const GetReportRequest = closed({
  ...ReportRef,
  startIndex: Type.Optional(
    Type.Integer({ minimum: 0, description: 'First entry to read; all pages from it are read.' }),
  ),
});
export const ReportPage = Type.Object({
  startIndex: Type.Integer(),
  txid: Type.String(),
  totalCount: Type.Integer(),
  hasMoreData: Type.Boolean(),
  devLocationList: Type.Array(LocationEntry),
});
export const GetReportResult = Type.Object({
  txid: Type.String(),
  totalCount: Type.Integer(),
  devLocationList: Type.Array(LocationEntry),
});
export const CancelReportResponse = Type.Object({ txid: Type.String() });

// ── exclusions (2.3) ────────────────────────────────────────────────────────────────────────────
export const SetExclusionsRequest = closed(
  {
    accountName: AccountName,
    type: Type.Optional(Type.String({ enum: ['append', 'replace'], description: 'Default replace.' })),
    allDevice: Type.Optional(Type.Boolean({ description: 'true: every device of the account is excluded.' })),
    exclusion: Type.Optional(
      Type.Array(Type.String({ pattern: ID_PATTERNS.imei, description: 'IMEI' }), {
        maxItems: MAX_EXCLUSIONS,
        uniqueItems: true,
        description: `IMEIs to exclude, each once, at most ${MAX_EXCLUSIONS}.`,
      }),
    ),
  },
  {
    // allDevice true together with an exclusion list is a conflict (spec section 3).
    not: {
      properties: { allDevice: { const: true }, exclusion: { minItems: 1 } },
      required: ['allDevice', 'exclusion'],
    },
    'x-message': 'allDevice true cannot be sent together with an exclusion list (conflicting device list)',
  },
);
export const SetExclusionsResponse = Type.Object({ success: Type.Boolean() });

export const GetExclusionsRequest = closed({
  accountName: AccountName,
  startIndex: Type.Optional(Type.Integer({ minimum: 0 })),
});
export const ExclusionsPage = Type.Object({
  accountName: Type.String(),
  allDevice: Type.Boolean(),
  hasMoreData: Type.Boolean(),
  totalCount: Type.Integer(),
  updateTime: Type.Optional(Type.String()),
  exclusion: Type.Array(Type.String()),
});
export const GetExclusionsResult = Type.Object({
  accountName: Type.String(),
  allDevice: Type.Boolean(),
  totalCount: Type.Integer(),
  updateTime: Type.Optional(Type.String()),
  exclusion: Type.Array(Type.String()),
});

// ── callback listeners ──────────────────────────────────────────────────────────────────────────
/** A listener as listed (spec 2.14). */
export const Listener = Type.Object({
  accountName: Type.String(),
  serviceName: Type.String(),
  url: Type.String({ description: 'The value is `undefined` if no URL is set.' }),
  username: Type.Optional(Type.String()),
  password: Type.Optional(Type.String()),
});
export const ListenerList = Type.Array(Listener, { description: 'Empty when none is registered.' });
export const AccountOnlyRequest = closed({ accountName: AccountName });

export const RegisterLocationCallbackRequest = closed({
  accountName: AccountName,
  name: Type.Optional(Type.String({ enum: ['Location'], description: 'Default Location.' })),
  url: Type.String({ format: 'uri', pattern: '^https?://' }),
});
export const DeregisterLocationCallbackRequest = closed({
  accountName: AccountName,
  serviceName: Type.Optional(
    Type.String({ enum: ['Location'], description: 'The `{service}` path parameter; default Location.' }),
  ),
});
/**
 * The spec gives two bodies for a deregistration: `{ success: true }`, which the real service sends (its SDKs'
 * `DeviceLocationSuccessResult`), and `{ accountName, serviceName }`. Both are read.
 */
export const DeregisterResponse = Type.Union([
  Type.Object({ success: Type.Boolean() }),
  Type.Object({ accountName: Type.String(), serviceName: Type.String() }),
]);
export const RegisteredResponse = Type.Object({ accountName: Type.String(), serviceName: Type.String() });
/**
 * A Location listener registered: the real service answers `{ account, name }` (its SDKs'
 * `CallbackRegistrationResult`), the spec's connectivity listeners `{ accountName, serviceName }`. Both are read.
 */
export const LocationRegisteredResponse = Type.Union([
  Type.Object({ account: Type.String(), name: Type.String() }),
  RegisteredResponse,
]);
