/**
 * The dependency rule of docs/architecture.md, checked on every CI run:
 * domain <- application <- infrastructure <- apps; contract only zod and @ts-rest/core.
 */
const layers = ['domain', 'application', 'infrastructure', 'apps', 'contract'];

module.exports = {
  forbidden: [
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
