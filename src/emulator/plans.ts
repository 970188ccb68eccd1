/**
 * What an account is (`/m2m/v1/accounts/{aname}`, `/statesandservices`, `/m2m/v1/plans/{aname}`): its
 * information, the custom states of its service, and its data service plans, whose `code` is what activation
 * and plan changes take. Read-only: they come from the seed and the account's registrations.
 */
import { account, validInput, type Answer, type Ctx, type Json } from './context.js';
import { CARRIER } from './connectivity.js';
import type { Plan } from './seed-tables.js';

const KB = 1024;

function servicePlan(p: Plan): Json {
  return {
    name: p.name,
    code: p.code,
    carrierServicePlanCode: p.code,
    sizeKb: Math.round(p.allowanceBytes / KB),
    extendedAttributes: [{ key: 'PlanFamily', value: p.family }],
  };
}

function info(ctx: Ctx): Answer {
  const a = account(ctx, validInput(ctx).accountName);
  const st = ctx.st;
  return {
    body: {
      accountName: a.name,
      accountNumber: a.name.slice(0, 10),
      organizationName: st.world.profile.organizationName,
      // Activation adds devices the account does not have yet (spec 4.5).
      isProvisioningAllowed: true,
      carriers: [CARRIER],
      features: ['SMS', ...(st.locationRegistered.has(a.name) ? ['Location'] : [])],
      iPPools: [
        { poolName: 'Dynamic', poolType: 'Dynamic IP', isDefaultPool: true },
        { poolName: 'Static', poolType: 'Static IP', isDefaultPool: false },
      ],
      servicePlans: st.world.plans.map(servicePlan),
    },
  };
}

/** The service's custom states in their workflow order, with the plans a device in each may be on. */
function statesAndServices(ctx: Ctx): Answer {
  const a = account(ctx, validInput(ctx).accountName);
  const plans = ctx.st.world.plans.map((p) => p.code);
  const states = [
    { name: 'Pending', servicePlans: [] },
    { name: 'Active', servicePlans: plans },
    { name: 'Suspended', servicePlans: plans },
    { name: 'Deactivated', servicePlans: [] },
  ].map((s, i) => ({ ...s, workflowSequenceNumber: i + 1 }));
  return {
    body: {
      engagement: [
        {
          engagementId: `${a.name.slice(0, 10)}-M2M`,
          chargingGroup: 'Default',
          services: [{ name: 'Connectivity', description: 'Cellular data and SMS', states }],
        },
      ],
    },
  };
}

function plans(ctx: Ctx): Answer {
  account(ctx, validInput(ctx).accountName);
  return { body: ctx.st.world.plans.map(servicePlan) };
}

export const planHandlers = {
  'accounts.get': info,
  'accounts.statesAndServices': statesAndServices,
  'plans.list': plans,
};
