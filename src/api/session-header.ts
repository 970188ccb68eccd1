/**
 * The header that carries the session token. The spec names it `X-M2M-Token` and says the source writes a
 * vendor-prefixed name; the real service's SDKs send `VZ-M2M-Token` (docs/spec-decisions.md). The client sends
 * the one configured; the emulator reads either.
 */

/** The name the spec uses: the default. */
export const DEFAULT_SESSION_HEADER = 'X-M2M-Token';
/** The name the real service's SDKs send. */
export const VENDOR_SESSION_HEADER = 'VZ-M2M-Token';
/** An HTTP header name (an RFC 9110 token), as a JSON Schema pattern. */
export const HEADER_NAME_PATTERN = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";
