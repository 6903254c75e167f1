// ESLint: typescript-eslint's recommended rules over our TypeScript (npm run lint, part of npm test).
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'src/protocol/generated/', 'compat/', 'scripts/'] },
  eslint.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      // As tsc's noUnusedParameters: a leading underscore marks a name kept on purpose.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
    },
  },
);
