/**
 * The callback services the spec names, as plain values: the schemas (schemas/connectivity.ts) build on them,
 * and the configuration checks FLEETBOOK_CALLBACK_URL with them without loading the schema library.
 */

/** Callback service names shown in the spec (sections 2.14 and 6). */
export const CALLBACK_SERVICES = [
  'CarrierService',
  'DeviceSuspensionStatus',
  'DeviceUsage',
  'EnhancedConnectivityService',
  'Location',
  'DeviceProfileService',
  'DeviceService',
  'DiagnosticsService',
  'ExternalProvisioningChanges',
  'NetworkEventService',
  'StateService',
] as const;
