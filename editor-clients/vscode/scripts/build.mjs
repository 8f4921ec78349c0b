// Bundles the extension (node) and the chat webview (browser) with esbuild.
//   node scripts/build.mjs [--production] [--watch] [--tests]
// --tests bundles test/unit/*.test.ts into out/test/ for `node --test`.
import * as esbuild from 'esbuild';
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');
const tests = process.argv.includes('--tests');

const common = {
  bundle: true,
  sourcemap: production ? false : 'linked',
  minify: production,
  logLevel: 'warning',
  absWorkingDir: root,
};

const builds = tests
  ? [{
    ...common,
    entryPoints: readdirSync(join(root, 'test/unit')).filter((f) => f.endsWith('.test.ts')).map((f) => `test/unit/${f}`),
    outdir: 'out/test',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // Unit tests cover the pure modules: importing VS Code from one of them fails the run.
    external: ['vscode'],
  }]
  : [
    {
      ...common,
      entryPoints: ['src/extension.ts'],
      outfile: 'dist/extension.js',
      platform: 'node',
      format: 'cjs',
      target: 'node18',
      external: ['vscode'],
    },
    {
      ...common,
      entryPoints: ['src/webview/main.ts'],
      outfile: 'dist/webview.js',
      platform: 'browser',
      format: 'iife',
      target: 'es2020',
    },
  ];

rmSync(join(root, tests ? 'out' : 'dist'), { recursive: true, force: true });
if (!tests) {
  mkdirSync(join(root, 'dist'), { recursive: true });
  copyFileSync(join(root, 'media/chat.css'), join(root, 'dist/chat.css'));
}
if (watch) {
  for (const options of builds) await (await esbuild.context(options)).watch();
  console.log('watching for changes…');
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
}
