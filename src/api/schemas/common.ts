/**
 * Formats and building blocks shared by the request and response schemas of every area.
 * Each pattern encodes a rule of service-spec.md; where the spec contradicts itself the choice is
 * written in docs/spec-decisions.md.
 */
import Type from 'typebox';
import { ACCOUNT_NAME_PATTERN, DEVICE_KINDS, ID_FORMATS, ID_PATTERNS, type DeviceKind } from '../identifiers.js';

export { ACCOUNT_NAME_PATTERN, DEVICE_KINDS, ID_FORMATS, ID_PATTERNS, type DeviceKind };


/** An account name (ACCOUNT_NAME_PATTERN); a field that says more of the account it names has its own words. */
export const AccountName = Type.String({
  pattern: ACCOUNT_NAME_PATTERN,
  description: 'Billing account name: 10 digits, a hyphen, then 5 digits, e.g. 0000123456-00001.',
});

/** A UUID as the spec defines it: 32 to 36 characters (with or without hyphens). */
export const Uuid = Type.String({
  minLength: 32,
  maxLength: 36,
  pattern: '^[0-9a-fA-F-]{32,36}$',
  description: 'A UUID, 32 to 36 characters.',
});

export const DateTime = Type.String({ format: 'date-time', description: 'ISO 8601 date-time.' });
export const DateOnly = Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}', description: 'YYYY-MM-DD.' });

const EMAIL = "[A-Za-z0-9._%+'-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}";
/** `<email_list>`: comma-separated e-mail addresses. */
export const EmailList = Type.String({
  pattern: `^\\s*${EMAIL}(\\s*,\\s*${EMAIL})*\\s*$`,
  description: 'Comma-separated e-mail addresses.',
});
/** Comma-separated phone numbers, digits only: no dashes or parentheses (spec 2.2). */
export const PhoneList = Type.String({
  pattern: '^[0-9]{10,15}(,[0-9]{10,15})*$',
  description: 'Comma-separated phone numbers, digits only, no dashes, spaces or parentheses.',
});

/** Both spellings of each kind are valid on input: `imei` and `IMEI`. */
export function kindEnum(kinds: readonly string[]): string[] {
  return kinds.flatMap((k) => [k, k.toUpperCase()]);
}

/**
 * `id` in the format of its `kind`, for the kinds in `kinds`: one branch per kind, chosen by `kind`
 * (`discriminator`, which ajv evaluates as a switch; to other validators it is a plain `oneOf` of disjoint
 * branches). A chain of `if kind is K then ...` rules said the same at three times the cost, a cost paid by
 * every device of every request.
 */
export function idFormats(kinds: readonly DeviceKind[]): object {
  return {
    discriminator: { propertyName: 'kind' },
    oneOf: kinds.map((k) => ({
      properties: {
        kind: { enum: [k, k.toUpperCase()] },
        id: { pattern: ID_PATTERNS[k], description: ID_FORMATS[k] },
      },
    })),
  };
}

/**
 * A connectivity device identifier `{ id, kind }`. `id` has no length bound of its own: the format of its kind
 * (idFormats) already refuses an empty one, with a clearer message, and a bound would be one more check, and
 * the module that counts characters one more to load, for every device of every request.
 */
export const DeviceId = Type.Object(
  {
    id: Type.String({ description: 'The identifier, in the format of its kind.' }),
    kind: Type.String({
      enum: kindEnum(DEVICE_KINDS),
      description: 'imei, iccid, mdn, msisdn, meid, esn, imsi or eid.',
    }),
  },
  { additionalProperties: false, ...idFormats(DEVICE_KINDS) },
);
export type DeviceId = Type.Static<typeof DeviceId>;

/** A device as the m2m API writes it: several identifiers of one device. */
export const DeviceEntry = Type.Object(
  { deviceIds: Type.Array(DeviceId, { minItems: 1 }) },
  { additionalProperties: false },
);
export type DeviceEntry = Type.Static<typeof DeviceEntry>;

/**
 * Connectivity actions take `devices` as the API writes it (`[{ deviceIds: [...] }]`) or as a flat list of
 * `{ id, kind }`, one device each, which is what callbacks and listings hand over (product.md section 3).
 */
export const Devices = Type.Array(
  // A device with `deviceIds` is an entry, any other a flat identifier: one shape is checked, not two. Asked
  // this way round, a flat device (what listings and callbacks hand over) passes the `if` without ajv making
  // an error object for it: a third less time to check a list of them.
  Type.Unsafe<DeviceEntry | DeviceId>({
    if: { properties: { deviceIds: false } },
    then: DeviceId,
    else: DeviceEntry,
  }),
  {
    minItems: 1,
    description: 'Devices: [{ deviceIds: [{ id, kind }] }], or a flat list of { id, kind }, one device each.',
  },
);

/** A request object: closed, since an unknown field is a typo, and a typo must not be sent silently. */
export const closed = <P extends Type.TProperties>(props: P, extra: object = {}) =>
  Type.Object(props, { additionalProperties: false, ...extra });

/** `{ key, value }` pairs, as the m2m API writes extended attributes and custom fields. */
export const KeyValues = Type.Array(
  Type.Object({ key: Type.String(), value: Type.Optional(Type.Union([Type.String(), Type.Null()])) }),
);

/** The `{ errorCode, errorMessage }` body and friends are described in src/api/errors.ts, not here. */
export const Anything = Type.Unknown();

/** `{ success: boolean }`, the confirmation body of several location and subscription calls. */
export const Success = Type.Object({ success: Type.Boolean() });

/** An asynchronous connectivity request: the result arrives by callback (CarrierService). */
export const RequestAccepted = Type.Object({ requestId: Type.String() });
