/**
 * The formats of account names and device identifiers the spec fixes, as plain values: the schemas (schemas/)
 * build on them, and the emulator checks them without loading the schema library.
 */

/** Account names keep their leading zeros: 10 digits, a hyphen, 5 digits (spec conventions). */
export const ACCOUNT_NAME_PATTERN = '^[0-9]{10}-[0-9]{5}$';

/** Identifier formats by device kind. Kinds are matched case-insensitively (callbacks write them upper case). */
export const ID_PATTERNS = {
  imei: '^[0-9]{15}$',
  iccid: '^[0-9]{20}$',
  mdn: '^[0-9]{10}$',
  msisdn: '^1?[0-9]{10}$',
  meid: '^([0-9A-Fa-f]{14}|[0-9]{18})$',
  esn: '^([0-9A-Fa-f]{8}|[0-9]{11})$',
  imsi: '^[0-9]{6,15}$',
  eid: '^[0-9]{32}$',
} as const;
export type DeviceKind = keyof typeof ID_PATTERNS;
/** What each kind's identifier looks like, in words, for error messages. */
export const ID_FORMATS: Record<DeviceKind, string> = {
  imei: 'an IMEI is 15 digits',
  iccid: 'an ICCID is 20 digits',
  mdn: 'an MDN is 10 digits',
  msisdn: 'an MSISDN is 10 digits, optionally after a leading 1',
  meid: 'a MEID is 14 hexadecimal or 18 decimal digits',
  esn: 'an ESN is 8 hexadecimal or 11 decimal digits',
  imsi: 'an IMSI is 6 to 15 digits',
  eid: 'an EID is 32 digits',
};
export const DEVICE_KINDS = Object.keys(ID_PATTERNS) as DeviceKind[];
