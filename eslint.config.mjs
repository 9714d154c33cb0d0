// Typed ESLint. `no-restricted-imports` guards the runtime boundaries of the architecture and its
// layers (scripts/layers.mjs: each folder imports only folders below it): shared/ is imported
// everywhere (no Node built-ins, no vscode); the engine (rl/) knows neither VS Code nor SQLite; the
// store knows no VS Code; only the host may import vscode, and it never loads native modules
// (better-sqlite3, tfjs) because VS Code's Electron cannot load them.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { HOST_LAYERS, LAYERS, mayImport } from './scripts/layers.mjs';

const nodeBuiltins = ['node:*', 'fs', 'path', 'os', 'child_process', 'worker_threads', 'net', 'http', 'crypto', 'util', 'events', 'stream'];

// The layer order of scripts/layers.mjs as import patterns: a folder may not import any folder that is
// not below it (imports are relative, so a folder is matched by its last path segment, each unique).
const allLayers = [...LAYERS.flat(), ...HOST_LAYERS.flat()].filter((l) => l !== 'extension.ts');
const leaf = (l) => l.split('/').pop();
const above = (layer) => allLayers.filter((other) => other !== layer && other !== 'shared' && !mayImport(layer, other)).map((l) => `**/${leaf(l)}/**`);
/** What each layer's files may not import, besides the layers above it. */
const runtimeLimits = {
  shared: [...nodeBuiltins, 'vscode', 'better-sqlite3', '@tensorflow/*'],
  store: ['vscode'],
  host: ['better-sqlite3', '@tensorflow/*'],
};
const layerRules = allLayers.map((layer) => ({
  files: layer === 'rl' ? ['src/rl/*.ts'] : [`src/${layer}/**/*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      { patterns: [...(runtimeLimits[layer] ?? (layer.startsWith('rl') ? ['vscode', 'better-sqlite3'] : ['vscode'])), ...above(layer)] },
    ],
  },
}));

export default tseslint.config(
  // The experiment scripts (scripts/*.mjs: the learning check's pass rules) are linted and type-checked
  // through their JSDoc types (scripts/tsconfig.json); other .mjs files are build and test harnesses; checkNode.cjs must parse on any old Node, so it stays plain JS.
  // bench/*.mjs: probes run directly with node (the runtime's own WebAssembly features), outside the typed projects
  { ignores: ['dist/**', 'out/**', 'node_modules/**', '**/*.js', '*.mjs', 'test/**/*.mjs', 'bench/**/*.mjs', 'scripts/checkNode.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: ['./tsconfig.json', './webview-ui/tsconfig.json', './scripts/tsconfig.json'], tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      // an interface that only extends names a derived type (TransformerOptions extends OptionsOf<…>)
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
      'no-console': 'error',
    },
  },
  ...layerRules,
  {
    files: ['src/extension.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: ['better-sqlite3', '@tensorflow/*', ...above('extension.ts')] }] },
  },
  {
    // The webview runs in a browser: only shared code and browser packages. It builds DOM nodes and sets
    // text with textContent: no HTML string ever reaches the document (stored text is untrusted).
    files: ['webview-ui/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...nodeBuiltins,
            'vscode',
            'better-sqlite3',
            '@tensorflow/*',
            '**/rl/**',
            '**/store/**',
            '**/host/**',
            '**/cli/**',
            '**/worker/**',
            '**/backend/**',
          ],
        },
      ],
      'no-restricted-properties': [
        'error',
        ...['innerHTML', 'outerHTML', 'insertAdjacentHTML', 'setHTMLUnsafe', 'createContextualFragment', 'srcdoc'].map((property) => ({
          property,
          message: 'Build nodes and set text with textContent.',
        })),
        ...['write', 'writeln'].map((property) => ({ object: 'document', property, message: 'Build nodes and set text with textContent.' })),
      ],
      'no-restricted-globals': ['error', { name: 'DOMParser', message: 'Build nodes and set text with textContent.' }],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts', 'scripts/**/*.mjs'],
    rules: { 'no-console': 'off', '@typescript-eslint/no-floating-promises': 'off' },
  },
  {
    // The scripts read run records (JSON) written by the CLI: values of JSON.parse are `any` by design;
    // their shapes are checked by tsc through JSDoc where it matters.
    files: ['scripts/**/*.mjs'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // tsc reports undefined names (and knows Node's globals); ESLint's own check does not
      'no-undef': 'off',
    },
  },
);
