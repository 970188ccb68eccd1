/** fleetbook's public library surface. Everything else is internal. */
export { createClient, ApiClient, createAreas, type Client } from './api/client.js';
export type { ClientOptions, CallOptions } from './api/client-options.js';
export {
  ACTIONS,
  CATALOG,
  isAction,
  type ActionName,
  type ActionInput,
  type ActionOutput,
  type Area,
} from './api/catalog.js';
export {
  DEVICE_ERRORS,
  deviceErrorClass,
  type DeviceErrorType,
  type DeviceErrorClass,
} from './api/device-errors.js';
export {
  ERROR_CODES,
  FleetbookError,
  ApiError,
  NetworkError,
  InputError,
  UnknownActionError,
  LoginError,
  AuthError,
  ConfigError,
  type RetryClass,
} from './errors.js';
export { AreaBudget, type AreaOptions } from './rate/area.js';
export { loadConfig, type Config } from './config.js';
export { createLogger, type Logger } from './log.js';
export { systemClock, VirtualClock, type Clock } from './clock.js';
