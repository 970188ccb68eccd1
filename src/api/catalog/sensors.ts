/** Sensor and device management (/dm/v1): sensors, profiles, rules, notification groups. */
import { S } from './load-schemas.js';
import { normalizeConfiguration, normalizeProfiles, normalizeResourceIdentifier } from './normalize.js';
import type { Operation } from './operation.js';

export const SENSORS = {
  'sensors.query': {
    action: 'sensors.query',
    summary: 'Query sensors.',
    area: 'dm',
    method: 'POST',
    path: '/dm/v1/devices/sensors/actions/query',
    get input() {
      return S().SensorQueryRequest;
    },
    get output() {
      return S().SensorQueryResponse;
    },
    mutating: false,
    retrySafe: true,
    errorShape: 'error+cause',
    normalize: normalizeResourceIdentifier,
  },
  'sensors.networkExperience': {
    action: 'sensors.networkExperience',
    summary: 'Network experience overview (good, fair and bad device counts).',
    area: 'dm',
    method: 'POST',
    path: '/dm/v1/devices/networkexperience/actions/query',
    get input() {
      return S().NetworkExperienceRequest;
    },
    get output() {
      return S().NetworkExperienceResponse;
    },
    mutating: false,
    retrySafe: true,
    errorShape: 'error+cause',
  },
  'sensors.onboardingStatus': {
    action: 'sensors.onboardingStatus',
    summary: 'Onboarding status of a sensor behind a gateway.',
    area: 'dm',
    method: 'POST',
    path: '/dm/v1/devices/sensors/onboard/status/actions/query',
    get input() {
      return S().OnboardingStatusRequest;
    },
    get output() {
      return S().OnboardingStatusResponse;
    },
    mutating: false,
    retrySafe: true,
    errorShape: 'error+cause',
  },
  'sensors.setConfiguration': {
    action: 'sensors.setConfiguration',
    summary: 'Set a sensor configuration (BLE or tilt form).',
    area: 'dm',
    method: 'POST',
    path: '/dm/v1/devices/actions/set',
    get input() {
      return S().SetConfigurationRequest;
    },
    get output() {
      return S().SetConfigurationResponse;
    },
    mutating: true,
    retrySafe: true,
    errorShape: 'error+cause',
    normalize: normalizeConfiguration,
  },
  'deviceProfiles.update': {
    action: 'deviceProfiles.update',
    summary: 'Partially update device profiles.',
    area: 'dm',
    method: 'PATCH',
    path: '/dm/v1/deviceConfigurationProfiles',
    get input() {
      return S().UpdateProfilesRequest;
    },
    get output() {
      return S().UpdateProfilesResponse;
    },
    mutating: true,
    retrySafe: true,
    errorShape: 'error+cause',
    normalize: normalizeProfiles,
  },
  'rules.overwrite': {
    action: 'rules.overwrite',
    summary: 'Overwrite a Smart Alert rule.',
    area: 'dm',
    method: 'POST',
    path: '/dm/v1/rules',
    get input() {
      return S().OverwriteRuleRequest;
    },
    get output() {
      return S().Rule;
    },
    mutating: true,
    retrySafe: true,
    errorShape: 'error+cause',
  },
  'notificationGroups.removeUsers': {
    action: 'notificationGroups.removeUsers',
    summary: 'Remove users from a notification group.',
    area: 'dm',
    method: 'POST',
    path: '/dm/v1/notificationGroups/actions/remove-users',
    get input() {
      return S().RemoveUsersRequest;
    },
    get output() {
      return S().NoBody;
    },
    mutating: true,
    retrySafe: true,
    errorShape: 'error+cause',
  },
} as const satisfies Record<string, Operation>;
