/**
 * The dependency rule of docs/architecture.md, checked on every CI run:
 * domain <- application <- infrastructure <- apps; contract only zod and @ts-rest/core.
 */
const fs = require('node:fs');
const path = require('node:path');

const layers = ['domain', 'application', 'infrastructure', 'apps', 'contract'];

/**
 * The folders of application/, in the one direction their imports may run: a folder imports only
 * the folders before it (and domain/). ports/ and stores/ hold what several features share (the
 * ports of the clock, crypto and outbox; the stores of projects, keys, users, sessions and tokens),
 * so that no two features import each other. A new folder is placed here, where its imports put it.
 */
const applicationFolders = [
  'ports',
  'stores',
  'mail',
  'audit',
  'idempotency',
  'notifications',
  'sessions',
  'tokens',
  'api-keys',
  'projects',
  'mfa',
  'oauth',
  'auth',
  'email',
  'passkeys',
  'organizations',
  'billing',
  'usage',
  'users',
  'webhooks',
  'console',
  'overview',
];
const applicationDir = path.join(process.cwd(), 'application');
const unplaced = fs.existsSync(applicationDir)
  ? fs
      .readdirSync(applicationDir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && e.name !== 'testing' && !applicationFolders.includes(e.name))
      .map((e) => e.name)
  : [];
if (unplaced.length > 0) {
  throw new Error(`.dependency-cruiser.cjs: place application/${unplaced.join(', application/')} in applicationFolders (the order their imports run)`);
}
const applicationOrder = applicationFolders.slice(0, -1).map((folder, i) => ({
  name: 'application-folders-one-way',
  comment: `application/${folder}/ imports only the application folders listed before it in .dependency-cruiser.cjs.`,
  severity: 'error',
  from: { path: `^application/${folder}/`, pathNot: '\\.test\\.ts$' },
  to: { path: `^application/(${applicationFolders.slice(i + 1).join('|')})/` },
}));

module.exports = {
  forbidden: [
    ...applicationOrder,
    {
      name: 'domain-is-pure',
      comment: 'domain/ imports nothing outside itself (no packages, no other layers).',
      severity: 'error',
      from: { path: '^domain/', pathNot: '\\.test\\.ts$' },
      to: { pathNot: '^domain/', dependencyTypesNot: ['core'] },
    },
    {
      name: 'domain-no-node-builtins',
      comment: 'domain/ stays free of Node APIs too.',
      severity: 'error',
      from: { path: '^domain/', pathNot: '\\.test\\.ts$' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'application-imports-domain-only',
      comment: 'application/ may import domain/ and itself; frameworks and drivers belong in infrastructure/.',
      severity: 'error',
      from: { path: '^application/', pathNot: '\\.test\\.ts$' },
      to: { pathNot: '^(application|domain)/', dependencyTypesNot: ['core'] },
    },
    {
      name: 'infrastructure-not-apps',
      comment: 'infrastructure/ implements ports; it does not reach into apps/ or the contract.',
      severity: 'error',
      from: { path: '^infrastructure/' },
      to: { path: '^(apps|contract)/' },
    },
    {
      name: 'contract-is-shippable',
      comment: 'contract/ ships to clients as the SDK: only zod, @ts-rest/core and itself.',
      severity: 'error',
      from: { path: '^contract/' },
      to: { pathNot: '^(contract/|node_modules/(zod|@ts-rest/core)/)' },
    },
    {
      name: 'nothing-imports-tests',
      severity: 'error',
      from: { path: `^(${layers.join('|')})/`, pathNot: '\\.test\\.ts$' },
      to: { path: '^test/' },
    },
    {
      name: 'testing-helpers-only-in-tests',
      comment: 'application/testing/ holds the strict fakes of the unit tests; production code never imports it.',
      severity: 'error',
      from: { pathNot: ['\\.test\\.ts$', '^application/testing/'] },
      to: { path: '^application/testing/' },
    },
    {
      name: 'no-circular',
      comment: 'No import cycles, type-only ones included: a cycle of types still ties two modules together.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
