/**
 * The location quota of an account: its location subscription (transactions allowed per billing cycle) and the
 * transactions it used, under /loc/v1 (shapes from the vendor's published SDK and documentation,
 * docs/spec-decisions.md). Usage triggers fire on the same count.
 */
import Type from 'typebox';
import { AccountName, closed } from './common.js';

export const LocationSubscriptionRequest = closed({ accountName: AccountName });
export const LocationSubscription = Type.Object({
  accountName: Type.Optional(Type.String()),
  locType: Type.Optional(Type.String({ description: 'The location service license type (its SKU).' })),
  maxAllowance: Type.Optional(
    Type.String({ description: 'Billable location requests allowed per billing cycle.' }),
  ),
  purchaseTime: Type.Optional(Type.String()),
});

const UsDate = Type.String({
  pattern: '^(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])-[0-9]{4}$',
  description: 'mm-dd-yyyy.',
});
export const LocationUsageRequest = closed({
  accountName: AccountName,
  startDate: UsDate,
  endDate: UsDate,
  usageForAllAccounts: Type.Optional(
    Type.Boolean({ description: "With a primary account: each managed account's usage too." }),
  ),
});
/** The response is not in the published SDK (it reads any body); see docs/spec-decisions.md. */
export const LocationUsage = Type.Object({
  accountName: Type.Optional(Type.String()),
  locType: Type.Optional(Type.String()),
  maxAllowance: Type.Optional(Type.String()),
  startDate: Type.Optional(Type.String()),
  endDate: Type.Optional(Type.String()),
  transactions: Type.Optional(Type.Integer({ description: 'Transactions of the account in the period.' })),
  totalTransactions: Type.Optional(
    Type.Integer({ description: 'With usageForAllAccounts: the primary and its managed accounts.' }),
  ),
  accounts: Type.Optional(
    Type.Array(Type.Object({ accountName: Type.String(), transactions: Type.Integer() })),
  ),
});
