/** Callback listeners: of the Location service and of connectivity services. */
import { C, L } from './load-schemas.js';
import type { Json, Operation } from './operation.js';

/** The refusal of a deregistration whose listener is not registered (or not found): a repeat finds it gone. */
const LISTENER_NOT_FOUND = /no .*callback listener|not found/i;

export const CALLBACKS = {
  'locationCallbacks.list': {
    action: 'locationCallbacks.list',
    summary: 'List the callback listeners of an account.',
    // /fota/v1 has no budget of its own: it serves location listeners, so it shares the location area.
    area: 'loc',
    method: 'GET',
    path: '/fota/v1/callbacks/{accountName}',
    get input() {
      return L().AccountOnlyRequest;
    },
    get output() {
      return L().ListenerList;
    },
    // "The body is empty if none are registered" (spec 4.2): a playbook reads an empty list.
    whenEmpty: () => [],
    mutating: false,
    retrySafe: true,
    errorShape: 'errorCode',
  },
  'locationCallbacks.register': {
    action: 'locationCallbacks.register',
    summary: 'Register the Location callback listener of an account.',
    area: 'loc',
    method: 'POST',
    path: '/loc/v1/callbacks/{accountName}',
    get input() {
      return L().RegisterLocationCallbackRequest;
    },
    get output() {
      return L().LocationRegisteredResponse;
    },
    mutating: true,
    retrySafe: true,
    errorShape: 'errorCode',
    normalize: (i: Json) => ({ name: 'Location', ...i }),
  },
  'locationCallbacks.deregister': {
    action: 'locationCallbacks.deregister',
    summary: 'Stop Location callback messages for an account.',
    area: 'loc',
    method: 'DELETE',
    path: '/loc/v1/callbacks/{accountName}/name/{serviceName}',
    get input() {
      return L().DeregisterLocationCallbackRequest;
    },
    get output() {
      return L().DeregisterResponse;
    },
    mutating: true,
    retrySafe: true,
    removes: { notFound: LISTENER_NOT_FOUND, answer: () => ({ success: true }) },
    errorShape: 'errorCode',
    normalize: (i: Json) => ({ serviceName: 'Location', ...i }),
  },
  'callbacks.list': {
    action: 'callbacks.list',
    summary: 'List the connectivity callback listeners of an account.',
    area: 'm2m',
    method: 'GET',
    path: '/m2m/v1/callbacks/{accountName}',
    get input() {
      return L().AccountOnlyRequest;
    },
    get output() {
      return L().ListenerList;
    },
    mutating: false,
    retrySafe: true,
    errorShape: 'errorCode',
  },
  'callbacks.register': {
    action: 'callbacks.register',
    summary: 'Register a connectivity callback listener for a service.',
    area: 'm2m',
    method: 'POST',
    path: '/m2m/v1/callbacks/{accountName}',
    get input() {
      return C().RegisterCallbackRequest;
    },
    get output() {
      return L().RegisteredResponse;
    },
    mutating: true,
    retrySafe: true,
    errorShape: 'errorCode',
  },
  'callbacks.deregister': {
    action: 'callbacks.deregister',
    summary: 'Deregister a connectivity callback listener.',
    area: 'm2m',
    method: 'DELETE',
    path: '/m2m/v1/callbacks/{accountName}/name/{serviceName}',
    get input() {
      return C().DeregisterCallbackRequest;
    },
    get output() {
      return L().RegisteredResponse;
    },
    mutating: true,
    retrySafe: true,
    removes: {
      notFound: LISTENER_NOT_FOUND,
      answer: (i) => ({ accountName: i.accountName, serviceName: i.serviceName }),
    },
    errorShape: 'errorCode',
  },
} as const satisfies Record<string, Operation>;
