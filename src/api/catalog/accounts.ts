/** Accounts: what an account is (information, states and services, plans) and managed billing accounts. */
import { MANAGED_SERVICE } from '../limits.js';
import { entry } from './entry.js';
import { A, U } from './load-schemas.js';
import { normalizeManagedAccounts } from './normalize.js';
import type { Json, Operation } from './operation.js';

const read = { mutating: false, retrySafe: true, errorShape: 'errorCode' } as const;
/** The `{serviceName}` of the list's path, when the input leaves it out: the only one there is. */
const locationService = (i: Json) => ({ serviceName: MANAGED_SERVICE, ...i });

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
  'managedAccounts.provision': entry(
    {
      action: 'managedAccounts.provision',
      summary: "Activate a managed account's service with the TxId of add; answers the txid that cancels it.",
      area: 'subsc',
      method: 'POST',
      path: '/subsc/v1/managedaccounts/actions/provision',
      // Provisioning again with the same TxId answers the same txid.
      mutating: true,
      retrySafe: true,
      errorShape: 'errorCode',
    },
    () => U().ManagedAccountActionRequest,
    () => U().ManagedAccountActionResponse,
  ),
  'managedAccounts.cancel': entry(
    {
      action: 'managedAccounts.cancel',
      summary: "End a managed account's service, with the txid its provisioning answered.",
      area: 'subsc',
      method: 'POST',
      path: '/subsc/v1/managedaccounts/actions/cancel',
      mutating: true,
      retrySafe: false,
      errorShape: 'errorCode',
    },
    () => U().ManagedAccountActionRequest,
    () => U().ManagedAccountActionResponse,
  ),
  'managedAccounts.list': entry(
    {
      action: 'managedAccounts.list',
      summary: 'The managed accounts of a primary account: added, and provisioned, each with its txid.',
      area: 'subsc',
      method: 'GET',
      path: '/subsc/v1/managedaccounts/{accountName}/service/{serviceName}',
      ...read,
      normalize: locationService,
    },
    () => U().ListManagedAccountsRequest,
    () => U().ManagedAccountList,
  ),
  'accounts.get': entry(
    {
      action: 'accounts.get',
      summary: 'Information about an account: organization, features, IP pools, service plans.',
      area: 'm2m',
      method: 'GET',
      path: '/m2m/v1/accounts/{accountName}',
      ...read,
    },
    () => A().AccountRequest,
    () => A().Account,
  ),
  'accounts.statesAndServices': entry(
    {
      action: 'accounts.statesAndServices',
      summary: 'The custom services and states of an account, with the plans of each state.',
      area: 'm2m',
      method: 'GET',
      path: '/m2m/v1/accounts/{accountName}/statesandservices',
      ...read,
    },
    () => A().AccountRequest,
    () => A().StatesAndServices,
  ),
  'plans.list': entry(
    {
      action: 'plans.list',
      summary: 'The data service plans of an account: the codes activation and plan changes take.',
      area: 'm2m',
      method: 'GET',
      path: '/m2m/v1/plans/{accountName}',
      ...read,
    },
    () => A().AccountRequest,
    () => A().ServicePlans,
  ),
} as const satisfies Record<string, Operation>;
