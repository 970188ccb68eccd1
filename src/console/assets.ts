/**
 * The console's files: the page and its scripts (console/ at the package root) and the front-end libraries it
 * imports (preact, htm, Chart.js, from their npm packages), each served under a fixed URL. Nothing is fetched
 * from elsewhere: the console works with no internet access. They are read once, when first asked for.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, normalize, sep } from 'node:path';

const require = createRequire(import.meta.url);
/** console/ at the package root: two levels up from src/console/ and from dist/console/ alike. */
export const CONSOLE_DIR = join(import.meta.dirname, '..', '..', 'console');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** The libraries the page's import map names, by the file name it asks for. */
const VENDOR: Record<string, () => string> = {
  'preact.mjs': () => require.resolve('preact'),
  'hooks.mjs': () => join(dirname(require.resolve('preact')), '..', 'hooks', 'dist', 'hooks.mjs'),
  'htm.mjs': () => join(dirname(require.resolve('htm')), 'htm.mjs'),
  'chart.umd.min.js': () => join(dirname(require.resolve('chart.js')), 'chart.umd.min.js'),
};

export interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

function asset(file: string): Asset {
  const body = readFileSync(file);
  const ext = file.slice(file.lastIndexOf('.'));
  return {
    body,
    type: TYPES[ext] ?? 'application/octet-stream',
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
  };
}

export class Assets {
  private readonly cache = new Map<string, Asset | null>();

  /** The page, with the Content-Security-Policy that allows its import map and nothing inline besides. */
  page(): { asset: Asset; csp: string } {
    const page = this.get('index.html', () => join(CONSOLE_DIR, 'index.html'));
    if (!page) throw new Error(`the console's page is missing: ${join(CONSOLE_DIR, 'index.html')}`);
    const map = /<script type="importmap">([\s\S]*?)<\/script>/.exec(page.body.toString('utf8'))?.[1];
    const hash = map === undefined ? '' : ` 'sha256-${createHash('sha256').update(map).digest('base64')}'`;
    return {
      asset: page,
      csp: `default-src 'self'; script-src 'self'${hash}; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'`,
    };
  }

  /** A file of console/ by its path there, or undefined (never a file outside it). */
  file(path: string): Asset | undefined {
    const file = normalize(join(CONSOLE_DIR, path));
    if (!file.startsWith(CONSOLE_DIR + sep)) return undefined;
    return this.get(`file:${path}`, () => file);
  }

  /** A library the import map names, or undefined. */
  vendor(name: string): Asset | undefined {
    const where = VENDOR[name];
    return where ? this.get(`vendor:${name}`, where) : undefined;
  }

  private get(key: string, where: () => string): Asset | undefined {
    if (!this.cache.has(key)) {
      try {
        this.cache.set(key, asset(where()));
      } catch {
        this.cache.set(key, null);
      }
    }
    return this.cache.get(key) ?? undefined;
  }
}
