/** Accounts: managed billing accounts of a primary account. */
import { U } from './load-schemas.js';
import { normalizeManagedAccounts } from './normalize.js';
import type { Operation } from './operation.js';

export const ACCOUNTS = {
  'managedAccounts.add': {
    action: 'managedAccounts.add',
    summary: 'Add managed billing accounts to a primary account; returns the TxId to activate them with.',
    area: 'subsc',
    method: 'POST',
    path: '/subsc/v1/managedaccounts/actions/add',
    get input() {
      return U().AddManagedAccountsRequest;
    },
    get output() {
      return U().AddManagedAccountsResponse;
    },
    mutating: true,
    retrySafe: false,
    errorShape: 'errorCode',
    normalize: normalizeManagedAccounts,
  },
} as const satisfies Record<string, Operation>;
