/**
 * The one order of names fleetbook writes out (playbook files, diagnostics, suggestions): English collation,
 * whatever the machine's locale. `localeCompare` with no locale takes the process's, from LANG: on a Danish
 * machine `aa.yaml` came after `z.yaml`, on a Lithuanian one `y.yaml` before `j.yaml`.
 */
let collator: Intl.Collator | undefined;

/**
 * Compares two names in the order fleetbook lists them: negative when `a` comes first. The collator is made at
 * the first comparison: making it loads ICU's collation data (about 30 ms), which a command that sorts nothing
 * (`fleetbook --version`, `runs`) does not pay.
 */
export const compareText = (a: string, b: string): number =>
  (collator ??= new Intl.Collator('en')).compare(a, b);
