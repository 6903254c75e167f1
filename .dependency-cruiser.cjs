// The layer rules of src/ (run: npm run deps). Each folder may import only from itself and the folders
// before it in LAYERS; src/broker.ts, src/cli.ts and src/index.ts sit on top of them all. No cycles, not
// even through type-only imports, and nothing in src/ depends on test/ or bench/.

/** Bottom to top. */
const LAYERS = ['common', 'metrics', 'protocol', 'admin', 'records', 'config', 'security', 'storage', 'cluster', 'replica', 'group', 'txn', 'share-state', 'share', 'handlers', 'net', 'ops', 'cli'];

/** One rule per layer: no import of a layer above it, nor of the top-level files. */
const layerRules = LAYERS.map((layer, i) => {
  const above = LAYERS.slice(i + 1).map((upper) => `${upper}/`);
  return {
    name: `layer-${layer}`,
    comment: `src/${layer}/ may import only from ${LAYERS.slice(0, i + 1).join(', ')}`,
    severity: 'error',
    from: { path: `^src/${layer}/` },
    to: { path: `^src/(?:${[...above, '[^/]+$'].join('|')})` },
  };
});

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'layer-unknown',
      comment: 'every folder of src/ is one of the layers (add a new folder to LAYERS, in its place)',
      severity: 'error',
      from: { path: `^src/(?!(?:${LAYERS.join('|')})/)[^/]+/` },
      to: { path: '^src/' },
    },
    {
      name: 'no-circular',
      comment: 'no cycles, between folders or between two files of one folder',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-test-or-bench',
      comment: 'the broker does not depend on its tests or benchmarks',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(?:test|bench)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a cycle through types is still a cycle.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
