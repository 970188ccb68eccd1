import { readFileSync } from 'node:fs';

/** The version in package.json, which sits two folders above this module in src/ and in dist/ alike. */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}
