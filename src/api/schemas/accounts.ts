/**
 * What an account is at the service, under /m2m/v1: its information, its custom states and services, and its
 * service plans (spec 4.5 quick reference; shapes from the vendor's published SDK, docs/spec-decisions.md).
 */
import Type from 'typebox';
import { AccountName, closed, KeyValues } from './common.js';

/** The input of the operations that name only an account, in the path. */
export const AccountRequest = closed({ accountName: AccountName });

/** A data service plan: `code` is what activation and plan changes take as `servicePlan`. */
export const ServicePlan = Type.Object({
  name: Type.Optional(Type.String()),
  code: Type.Optional(Type.String({ description: 'The code devices.activate and devices.changePlan take.' })),
  carrierServicePlanCode: Type.Optional(Type.String()),
  sizeKb: Type.Optional(Type.Integer({ description: 'Data included per device per billing cycle, in KB.' })),
  extendedAttributes: Type.Optional(KeyValues),
});
export const ServicePlans = Type.Array(ServicePlan);

export const Account = Type.Object({
  accountName: Type.Optional(Type.String()),
  accountNumber: Type.Optional(Type.String()),
  organizationName: Type.Optional(Type.String()),
  isProvisioningAllowed: Type.Optional(
    Type.Boolean({ description: 'Devices can be added and activated in one request.' }),
  ),
  carriers: Type.Optional(Type.Array(Type.String())),
  features: Type.Optional(Type.Array(Type.String())),
  iPPools: Type.Optional(
    Type.Array(
      Type.Object({
        poolName: Type.Optional(Type.String()),
        poolType: Type.Optional(Type.String()),
        isDefaultPool: Type.Optional(Type.Boolean()),
      }),
    ),
  ),
  servicePlans: Type.Optional(ServicePlans),
});

const State = Type.Object({
  name: Type.Optional(Type.String()),
  workflowSequenceNumber: Type.Optional(Type.Number()),
  servicePlans: Type.Optional(Type.Array(Type.String())),
});
export const StatesAndServices = Type.Object({
  engagement: Type.Array(
    Type.Object({
      engagementId: Type.Optional(Type.String()),
      chargingGroup: Type.Optional(Type.String()),
      services: Type.Optional(
        Type.Array(
          Type.Object({
            name: Type.Optional(Type.String()),
            description: Type.Optional(Type.String()),
            states: Type.Optional(Type.Array(State)),
          }),
        ),
      ),
    }),
  ),
});
