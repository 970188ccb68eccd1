// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The layers of src/, lowest first (src/ARCHITECTURE.md says why each sits where it does). A module imports
 * from its own layer and those below, never from one above. A name is a folder of src/, or a file of src/
 * when it ends in .ts.
 */
const LAYERS = [
  ['util'],
  ['clock.ts', 'log.ts', 'errors.ts', 'retry.ts'],
  ['rate'],
  ['expressions', 'api'],
  ['events'],
  ['playbook'],
  ['config.ts'],
  ['store'],
  ['actions'],
  ['runner'],
  ['connect.ts'],
  ['console'],
  ['daemon'],
  ['testing'],
  ['cli'],
];

/**
 * The emulator stands beside the layers: it imports only these, and only connect.ts (the embedded emulator)
 * and the CLI (`fleetbook emulator`) import it.
 */
const EMULATOR = { name: 'emulator', imports: ['util', 'clock.ts', 'log.ts', 'errors.ts', 'api'] };
const STARTS_EMULATOR = ['connect.ts', 'testing', 'cli'];

/** The public library surface: the engine's modules, never the shells or the emulator. */
const INDEX = { name: 'index.ts', forbidden: ['connect.ts', 'daemon', 'cli', 'emulator'] };

/**
 * no-restricted-imports for the modules of `name`, forbidding `forbidden`, and the same for `import()`, which
 * that rule does not see. Import paths are matched as written, relative: a file of src/ reaches the others by
 * `./`, one in a folder by `../` (or `../../` from a subfolder).
 */
function layerRule(name, forbidden) {
  const topLevel = name.endsWith('.ts');
  const prefix = topLevel ? '^\\./' : '^(?:\\.\\./)+';
  const patterns = forbidden.map((target) => ({
    regex: target.endsWith('.ts') ? `${prefix}${target.slice(0, -3)}\\.js$` : `${prefix}${target}/`,
    message: reason(name, target),
  }));
  return {
    files: [topLevel ? `src/${name}` : `src/${name}/**`],
    rules: {
      'no-restricted-imports': ['error', { patterns }],
      'no-restricted-syntax': [
        'error',
        ...patterns.map((p) => ({
          // esquery's regular expressions cannot hold a '/'.
          selector: `ImportExpression[source.value=/${p.regex.replaceAll('/', '\\x2F')}/]`,
          message: p.message,
        })),
      ],
    },
  };
}

function reason(name, target) {
  const where = (n) => (n.endsWith('.ts') ? `src/${n}` : `src/${n}/`);
  const why =
    target === 'cli'
      ? 'nothing outside the CLI imports it'
      : target === 'emulator'
        ? 'only src/connect.ts and the CLI start the emulator'
        : name === 'emulator'
          ? `the emulator imports only ${EMULATOR.imports.map(where).join(', ')}`
          : name === 'index.ts'
            ? 'the library surface exports the engine, not the shells'
            : `${where(target)} is in a layer above ${where(name)}`;
  return `${where(name)} may not import ${where(target)}: ${why} (src/ARCHITECTURE.md, Layers).`;
}

function layerRules() {
  const all = [...LAYERS.flat(), EMULATOR.name];
  const blocks = LAYERS.flatMap((layer, i) =>
    layer.map((name) =>
      layerRule(name, [
        ...LAYERS.slice(i + 1).flat(),
        ...(STARTS_EMULATOR.includes(name) ? [] : [EMULATOR.name]),
      ]),
    ),
  );
  blocks.push(
    layerRule(
      EMULATOR.name,
      all.filter((n) => n !== EMULATOR.name && !EMULATOR.imports.includes(n)),
    ),
    layerRule(INDEX.name, INDEX.forbidden),
  );
  return blocks.filter((b) => b.rules['no-restricted-imports'][1].patterns.length);
}

export default tseslint.config(
  { ignores: ['dist/', 'coverage/', 'node_modules/', '.fleetbook/', 'schemas/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'error',
    },
  },
  {
    files: ['bin/**', 'src/cli/**', 'bench/**', 'scripts/**', 'test/**'],
    rules: { 'no-console': 'off' },
  },
  ...layerRules(),
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        performance: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        URL: 'readonly',
      },
    },
  },
);
