// @ts-check
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// The layers of src/ (docs/architecture.md): each may import only the ones listed, so the dependencies
// point one way (core <- db, mail, rate-limit <- app <- http <- cli, server.ts). Keys are the top-level
// entries of src/ as they appear in an import path; cli, server.ts and mail-thread.ts (the delivery thread's
// entry) are composition roots and take anything.
const LAYERS = {
  core: ['core'],
  db: ['core', 'db'],
  mail: ['core', 'mail'],
  'rate-limit': ['core', 'rate-limit'],
  app: ['core', 'db', 'mail', 'rate-limit', 'app'],
  http: ['core', 'app', 'http'],
  'config.js': ['core'],
};
const TOP_LEVEL = ['core', 'db', 'mail', 'rate-limit', 'app', 'http', 'cli', 'config.js', 'server.js', 'mail-thread.js'];

// Driver packages belong to the one folder that wraps them (server.ts also assembles Fastify).
const PACKAGES = [
  {
    regex: '^(kysely|pg|better-sqlite3)(/|$)',
    home: ['db'],
    message: 'kysely, pg and better-sqlite3 are used only in src/db: call a repository.',
  },
  { regex: '^nodemailer(/|$)', home: ['mail'], message: 'nodemailer is used only in src/mail.' },
  { regex: '^ioredis(/|$)', home: ['rate-limit'], message: 'ioredis is used only in src/rate-limit.' },
  { regex: '^(fastify|@fastify/[^/]+)(/|$)', home: ['http', 'server.js'], message: 'Fastify is used only in src/http and src/server.ts.' },
];

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Patterns for a file `depth` folders below src/ (0: src/config.ts): an import reaches src/<entry> by exactly that many `../`. */
function layerPatterns(layer, depth) {
  const up = depth === 0 ? '\\./' : `(\\.\\./){${depth}}`;
  const allowed = LAYERS[layer];
  const forbidden = TOP_LEVEL.filter((entry) => !allowed.includes(entry));
  const folders = forbidden.filter((entry) => !entry.endsWith('.js')).map(escape);
  const files = forbidden.filter((entry) => entry.endsWith('.js')).map(escape);
  const alternatives = [...(folders.length ? [`(${folders.join('|')})/`] : []), ...(files.length ? [`(${files.join('|')})$`] : [])];
  const patterns = [
    {
      regex: `^${up}(${alternatives.join('|')})`,
      caseSensitive: true,
      message: `src/${layer.replace(/\.js$/, '.ts')} may import only ${allowed.join(', ')} (the layer rule in eslint.config.js).`,
    },
  ];
  if (layer === 'http') {
    // http passes the opaque Db handle from the composition root to the use-cases: it may name its type, nothing more
    const others = folders.filter((folder) => folder !== 'db');
    patterns[0].regex = `^${up}((${others.join('|')})/|db/(?!connect\\.js$)|(${files.join('|')})$)`;
    patterns.push({
      regex: `^${up}db/connect\\.js$`,
      caseSensitive: true,
      allowTypeImports: true,
      message: 'http may only `import type { Db }` from db/connect.js; the use-cases in app do the database work.',
    });
  }
  return patterns;
}

function packagePatterns(entry) {
  return PACKAGES.filter((p) => !p.home.includes(entry)).map(({ regex, message }) => ({ regex, caseSensitive: true, message }));
}

// Imports are not the only way across: a handle can be passed down. So outside src/db no code builds a
// query (Kysely's entry points), http never touches the Db handle's insides (it only passes it to app), and
// nothing but the CLI loads a module dynamically (which the import patterns above cannot see).
const QUERY_BUILDING = {
  selector: 'CallExpression[callee.property.name=/^(selectFrom|selectNoFrom|insertInto|replaceInto|updateTable|deleteFrom|mergeInto)$/]',
  message: 'Queries are built only in src/db: call a repository function.',
};
const DB_HANDLE_INSIDES = {
  selector:
    'MemberExpression[property.name=/^(kysely|hot|write|lockSchedule)$/][object.name="db"], MemberExpression[property.name=/^(kysely|hot|write|lockSchedule)$/][object.property.name="db"]',
  message: 'http passes the Db handle to use-cases in app; it never reads or writes through it.',
};
const DYNAMIC_IMPORT = {
  selector: 'ImportExpression',
  message: 'Only the CLI loads modules lazily; import statically so the layer rule sees it.',
};

function syntaxRule() {
  const outsideDb = ['core', 'mail', 'rate-limit', 'app', 'http'];
  return [
    ...outsideDb.map((layer) => ({
      files: [`src/${layer}/**/*.ts`],
      rules: {
        'no-restricted-syntax': ['error', QUERY_BUILDING, DYNAMIC_IMPORT, ...(layer === 'http' ? [DB_HANDLE_INSIDES] : [])],
      },
    })),
    {
      files: ['src/db/**/*.ts', 'src/config.ts', 'src/server.ts', 'src/mail-thread.ts'],
      rules: { 'no-restricted-syntax': ['error', DYNAMIC_IMPORT] },
    },
  ];
}

/** One block per layer and folder depth, since a rule's options in a later block replace, not extend, earlier ones. */
function layerRule() {
  const blocks = [];
  for (const entry of TOP_LEVEL) {
    const isFile = entry.endsWith('.js');
    for (let depth = isFile ? 0 : 1; depth <= (isFile ? 0 : 6); depth += 1) {
      const files = isFile ? [`src/${entry.replace(/\.js$/, '.ts')}`] : [`src/${entry}/${'*/'.repeat(depth - 1)}*.ts`];
      const patterns = [...(entry in LAYERS ? layerPatterns(entry, depth) : []), ...packagePatterns(entry)];
      blocks.push({ files, rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns }] } });
    }
  }
  return blocks;
}

export default defineConfig(
  globalIgnores(['dist/', 'node_modules/', 'tmp/', 'data/']),
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', caughtErrors: 'none' }],
      // the admin pages' escaped HTML fragment interpolates as its markup on purpose
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        {
          allow: [
            { from: 'lib', name: ['Error', 'URL', 'URLSearchParams'] },
            { from: 'file', name: 'Markup', path: 'src/http/admin/html.ts' },
          ],
        },
      ],
      // Fastify plugins and interface implementations are async without awaiting; floating and misused
      // promises, the bugs this rule stands in for, have their own rules above
      '@typescript-eslint/require-await': 'off',
      // the regular expressions with control characters are the ones that strip them (mail headers, ICS)
      'no-control-regex': 'off',
    },
  },
  {
    files: ['test/**', 'bench/**', 'scripts/**'],
    rules: {
      // node:test's test() and describe() return promises the runner itself awaits
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            {
              from: 'package',
              package: 'node:test',
              name: ['test', 'it', 'describe', 'suite', 'before', 'after', 'beforeEach', 'afterEach'],
            },
          ],
        },
      ],
      // tests read parsed JSON bodies and poke at internals; their assertions check the shapes
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // test fixtures hand out { db, dispose } objects whose functions are destructured; none uses `this`
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    files: ['src/db/migrations/**'],
    rules: {
      // a migration is written against the schema as it was then, not today's table types (Kysely's advice)
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node },
  },
  ...layerRule(),
  ...syntaxRule(),
);
