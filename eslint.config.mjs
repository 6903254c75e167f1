// ESLint: typescript-eslint's recommended rules over our TypeScript and JavaScript (npm run lint,
// part of npm test). The generated codecs are left out: the generator's own tests check them.
import eslint from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', '**/node_modules/', 'src/protocol/generated/', 'compat/python/.venv/', 'compat/java/target/'] },
  eslint.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      // As tsc's noUnusedParameters: a leading underscore marks a name kept on purpose.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
    },
  },
  {
    // The generator, the compat harness and its kafkajs client: plain CommonJS run by Node.
    files: ['**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: globals.node },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The web console: ES modules run by the browser as they are.
    files: ['console/**/*.js'],
    languageOptions: { sourceType: 'module', globals: { ...globals.browser, uPlot: 'readonly' } },
  },
);
