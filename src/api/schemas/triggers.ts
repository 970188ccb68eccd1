/** Price plan usage triggers (spec 2.1, 4.1; listing from public-api-facts.md). */
import Type from 'typebox';
import { AccountName, DateTime, EmailList, Uuid } from './common.js';

/** A closed object: unknown fields are typos, and a typo must not be sent silently. */
function closed<P extends Type.TProperties>(props: P, extra: object = {}) {
  return Type.Object(props, { additionalProperties: false, ...extra });
}

const Unit = Type.String({ enum: ['KB', 'MB', 'GB', 'TB'] });
const SuspendDuration = Type.String({ enum: ['30', '60', '90', 'NextBillCycle'] });
/** service-spec 2.1.2 writes `withoutBilling` in the example and `WithoutBilling` in the table: both are accepted. */
const SuspendOption = Type.String({
  enum: ['WithBilling', 'WithoutBilling', 'withBilling', 'withoutBilling'],
});
const PlanCode = Type.Union([Type.String({ minLength: 1 }), Type.Integer({ minimum: 0 })], {
  description:
    'Service plan code. The field table says integer, the examples a string; both are accepted and a string is sent.',
});
const Percentages = closed({
  percentage50: Type.Optional(Type.Boolean()),
  percentage75: Type.Optional(Type.Boolean()),
  percentage90: Type.Optional(Type.Boolean()),
  percentage100: Type.Optional(Type.Boolean()),
});

const ifProp = (name: string, values: unknown[]) => ({
  properties: { [name]: { enum: values } },
  required: [name],
});

// ── notification (2.1.4) ────────────────────────────────────────────────────────────────────────
export const Notification = closed(
  {
    notificationType: Type.String({ enum: ['PerEvent', 'DailySummary'] }),
    callback: Type.Boolean({ description: 'true: a callback is generated.' }),
    emailNotification: Type.Optional(Type.Boolean()),
    notificationGroupName: Type.Optional(Type.String()),
    notificationFrequencyFactor: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'Reminder notifications after activation (spelling of the examples).',
      }),
    ),
    notificationFequencyFactor: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'Spelling of the field table; accepted and sent as notificationFrequencyFactor.',
      }),
    ),
    notificationFrequencyInterval: Type.String({ enum: ['Hourly', 'Daily', 'Weekly'] }),
    externalEmailRecipients: Type.Optional(EmailList),
    smsNotification: Type.Optional(Type.Boolean()),
    smsNumbers: Type.Optional(
      Type.Array(
        closed({ number: Type.String({ pattern: '^[0-9]{10}$' }), carrier: Type.String({ minLength: 1 }) }),
      ),
    ),
    reminder: Type.Boolean(),
    severity: Type.String({ enum: ['Notice', 'Minor', 'Major', 'Critical'] }),
  },
  {
    allOf: [
      {
        anyOf: [{ required: ['notificationFrequencyFactor'] }, { required: ['notificationFequencyFactor'] }],
        'x-message': 'notificationFrequencyFactor is required',
      },
      {
        if: ifProp('smsNotification', [true]),
        then: { required: ['smsNumbers'], 'x-message': 'smsNumbers are needed when smsNotification is true' },
      },
    ],
  },
);

// ── payAsYouGo (2.1.1) ──────────────────────────────────────────────────────────────────────────
const PayAsYouGoCondition = closed(
  {
    conditionType: Type.Optional(
      Type.String({
        enum: ['Individual', 'AccountLevel', 'UsageAllowance', 'Aging', ''],
        description: 'Blank means Individual.',
      }),
    ),
    comparator: Type.Optional(Type.String({ enum: ['gt', 'lt', 'eq'] })),
    threshold: Type.Optional(Type.Integer({ minimum: 0 })),
    thresholdUnit: Type.Optional(Unit),
    cycleType: Type.Optional(Type.String({ enum: ['Daily', 'Weekly', 'Monthly'] })),
    separateOrCombined: Type.Optional(Type.String({ enum: ['Separate', 'Combined'] })),
    percentage50: Type.Optional(Type.Boolean()),
    percentage75: Type.Optional(Type.Boolean()),
    percentage90: Type.Optional(Type.Boolean()),
    percentage100: Type.Optional(Type.Boolean()),
  },
  {
    allOf: [
      // comparator, threshold and cycleType are required for Individual (also when blank) and AccountLevel.
      {
        if: {
          anyOf: [
            { not: { required: ['conditionType'] } },
            ifProp('conditionType', ['Individual', 'AccountLevel', '']),
          ],
        },
        then: {
          required: ['comparator', 'threshold', 'cycleType'],
          'x-message':
            'comparator, threshold and cycleType are required for Individual and AccountLevel conditions',
        },
      },
      // separateOrCombined only applies to AccountLevel.
      {
        if: { required: ['separateOrCombined'] },
        then: {
          ...ifProp('conditionType', ['AccountLevel']),
          'x-message': 'separateOrCombined applies only to conditionType AccountLevel',
        },
      },
    ],
  },
);

const PayAsYouGoAction = closed(
  {
    suspend: Type.Optional(Type.Boolean()),
    suspendDetails: Type.Optional(
      closed({
        suspendFromAccounts: Type.Optional(Type.Array(AccountName)),
        suspendDuration: Type.Optional(SuspendDuration),
        suspendOption: Type.Optional(SuspendOption),
        threshold: Type.Optional(Type.Integer({ minimum: 0 })),
        thresholdUnit: Type.Optional(Unit),
      }),
    ),
    changePlan: Type.Optional(Type.Boolean()),
    changePlanDetails: Type.Optional(closed({ toCarrierServicePlanCode: Type.String({ minLength: 1 }) })),
    agingDetails: Type.Optional(
      closed({
        onNumberOfBillCycle: Type.Integer({ minimum: 1 }),
        toCarrierServicePlanCode: Type.Optional(Type.String({ minLength: 1 })),
      }),
    ),
  },
  {
    allOf: [
      // suspend and changePlan must not both be true.
      {
        not: {
          properties: { suspend: { const: true }, changePlan: { const: true } },
          required: ['suspend', 'changePlan'],
        },
        'x-message': 'suspend and changePlan must not both be true',
      },
      {
        if: ifProp('suspend', [true]),
        then: {
          required: ['suspendDetails'],
          'x-message': 'suspendDetails are required when suspend is true',
        },
      },
    ],
  },
);

const condType = (values: unknown[]) => ({
  properties: { condition: ifProp('conditionType', values) },
  required: ['condition'],
});
const individual = {
  properties: {
    condition: {
      anyOf: [{ not: { required: ['conditionType'] } }, ifProp('conditionType', ['Individual', ''])],
    },
  },
};

export const PayAsYouGo = closed(
  {
    filterCriteria: closed({
      carrierServicePlanCode: PlanCode,
      accountNameList: Type.Array(AccountName, { minItems: 1 }),
    }),
    condition: PayAsYouGoCondition,
    action: PayAsYouGoAction,
  },
  {
    allOf: [
      // suspendDetails.threshold and thresholdUnit when suspending on an AccountLevel condition.
      {
        if: { allOf: [condType(['AccountLevel']), { properties: { action: ifProp('suspend', [true]) } }] },
        then: {
          properties: {
            action: {
              properties: {
                suspendDetails: {
                  required: ['threshold', 'thresholdUnit'],
                  'x-message':
                    'suspendDetails.threshold and thresholdUnit are required to suspend on an AccountLevel condition',
                },
              },
            },
          },
        },
      },
      // changePlanDetails when changing plan on an Individual condition.
      {
        if: { allOf: [individual, { properties: { action: ifProp('changePlan', [true]) } }] },
        then: {
          properties: {
            action: {
              required: ['changePlanDetails'],
              'x-message':
                'changePlanDetails are required when changePlan is true on an Individual condition',
            },
          },
        },
      },
      // agingDetails for Aging, with the target plan when changing plan.
      {
        if: condType(['Aging']),
        then: {
          properties: {
            action: {
              required: ['agingDetails'],
              'x-message': 'agingDetails are required for conditionType Aging',
            },
          },
        },
      },
      {
        if: { allOf: [condType(['Aging']), { properties: { action: ifProp('changePlan', [true]) } }] },
        then: {
          properties: {
            action: {
              properties: {
                agingDetails: {
                  required: ['toCarrierServicePlanCode'],
                  'x-message': 'agingDetails.toCarrierServicePlanCode is required when changePlan is true',
                },
              },
            },
          },
        },
      },
    ],
  },
);

const TriggerCategory = Type.String({
  enum: ['PricePlanDataUsage', 'pricePlanDataUsage'],
  description:
    'The examples write PricePlanDataUsage, the field description pricePlanDataUsage; PricePlanDataUsage is sent.',
});

const triggerCommon = {
  triggerName: Type.String({ minLength: 1 }),
  ecpdId: Type.String({ minLength: 1, description: 'The customer profile ID.' }),
  deviceGroupName: Type.Optional(
    Type.String({ minLength: 1, description: 'Only the devices of this device group (the real service takes it).' }),
  ),
  triggerCategory: TriggerCategory,
  notification: Notification,
  active: Type.Boolean(),
};

export const CreatePayAsYouGoRequest = closed({
  ...triggerCommon,
  pricePlanTrigger: closed({ payAsYouGo: PayAsYouGo }),
});

// ── accountGroupShare (2.1.2, 2.1.3) ────────────────────────────────────────────────────────────
const AgsIndividual = closed(
  {
    filterCriteria: closed({ ratePlanGroupId: Type.Integer() }),
    condition: closed({ action: Type.String({ enum: ['notify', 'suspend', 'changePricePlan'] }) }),
    action: closed({
      notify: Type.Optional(
        closed({
          alertType: Type.Optional(Type.String()),
          threshold: Type.Array(closed({ carrierCode: Type.String(), percentage: Percentages })),
        }),
      ),
      suspend: Type.Optional(
        closed({
          suspendDuration: Type.Optional(SuspendDuration),
          suspendOption: Type.Optional(SuspendOption),
          alertType: Type.Optional(Type.String()),
          threshold: Type.Array(
            closed({ carrierCode: Type.String(), usagePercentage: Type.Integer({ minimum: 0 }) }),
          ),
        }),
      ),
      changePlan: Type.Optional(
        closed({
          sharePlan: Type.Array(
            closed({
              fromCarrierCode: Type.String(),
              toCarrierCode: Type.String(),
              criteriaPercentage: Type.Integer({ minimum: 0 }),
            }),
            { minItems: 1 },
          ),
          triggerDate: Type.Optional(Type.String()),
        }),
      ),
    }),
  },
  {
    // condition.action selects which member of action is present.
    allOf: [
      {
        if: { properties: { condition: ifProp('action', ['notify']) } },
        then: {
          properties: {
            action: { required: ['notify'], 'x-message': 'condition.action notify needs action.notify' },
          },
        },
      },
      {
        if: { properties: { condition: ifProp('action', ['suspend']) } },
        then: {
          properties: {
            action: { required: ['suspend'], 'x-message': 'condition.action suspend needs action.suspend' },
          },
        },
      },
      {
        if: { properties: { condition: ifProp('action', ['changePricePlan']) } },
        then: {
          properties: {
            action: {
              required: ['changePlan'],
              'x-message': 'condition.action changePricePlan needs action.changePlan',
            },
          },
        },
      },
    ],
  },
);

const PoolPlanChange = closed({
  changePlan: Type.Array(closed({ fromCarrierCode: Type.String(), toCarrierCode: Type.String() }), {
    minItems: 1,
  }),
  dataPoolOverageBuffer: Type.Optional(Type.Integer({ minimum: 0 })),
  triggerDate: Type.Optional(Type.String()),
});

const AgsPool = closed(
  {
    filterCriteria: closed({ ratePlanGroupId: Type.Integer() }),
    condition: closed({ action: Type.String({ enum: ['notify', 'changePricePlan'] }) }),
    action: closed({
      notify: Type.Optional(closed({ threshold: Type.Array(closed({ percentage: Percentages })) })),
      automation: Type.Optional(Type.String()),
      changePlan: Type.Optional(
        closed(
          { changePlanGT: Type.Optional(PoolPlanChange), changePlanLT: Type.Optional(PoolPlanChange) },
          { minProperties: 1 },
        ),
      ),
    }),
  },
  {
    allOf: [
      {
        if: { properties: { condition: ifProp('action', ['notify']) } },
        then: {
          properties: {
            action: { required: ['notify'], 'x-message': 'condition.action notify needs action.notify' },
          },
        },
      },
      {
        if: { properties: { condition: ifProp('action', ['changePricePlan']) } },
        then: {
          properties: {
            action: {
              required: ['changePlan'],
              'x-message': 'condition.action changePricePlan needs action.changePlan',
            },
          },
        },
      },
    ],
  },
);

const AccountGroupShare = closed(
  {
    accountGroupShareIndividual: Type.Optional(AgsIndividual),
    accountGroupSharePool: Type.Optional(AgsPool),
  },
  {
    minProperties: 1,
    maxProperties: 1,
    description: 'Exactly one of accountGroupShareIndividual, accountGroupSharePool.',
  },
);

export const UpdateAccountGroupShareRequest = closed({
  triggerId: Uuid,
  ...triggerCommon,
  pricePlanTrigger: closed(
    {
      accountGroupShare: Type.Optional(AccountGroupShare),
      accountShare: Type.Optional(AccountGroupShare),
    },
    {
      minProperties: 1,
      maxProperties: 1,
      description:
        'accountGroupShare (the examples) or accountShare (the field table); sent as accountGroupShare.',
    },
  ),
});

export const TriggerIdResponse = Type.Object({ triggerId: Type.String() });

export const ListTriggersRequest = closed(
  {
    accountName: Type.Optional(AccountName),
    triggerId: Type.Optional(Uuid),
  },
  { maxProperties: 1, description: 'Nothing for every trigger, or one of accountName, triggerId.' },
);

export const ListTriggersResponse = Type.Object({
  triggers: Type.Array(
    Type.Object({
      triggerId: Type.String(),
      triggerName: Type.String(),
      accountName: Type.Optional(Type.String()),
      organizationName: Type.Optional(Type.String()),
      triggerCategory: Type.String(),
      triggerAttributes: Type.Array(Type.Object({ key: Type.String(), value: Type.Unknown() })),
      createdAt: DateTime,
      modifiedAt: DateTime,
    }),
  ),
});
