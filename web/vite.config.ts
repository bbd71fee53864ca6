// The dashboard build: a single-page app served by the api under /dashboard/ with a strict CSP
// (script-src 'self', style-src 'self', no data: fonts), so the output must be external hashed files only.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import preact from '@preact/preset-vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/dashboard/',
  plugins: [preact()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Hashed names under assets/ are what the api serves as immutable for a year.
    assetsDir: 'assets',
    // Inlined assets would be data: URIs, which font-src 'self' refuses; every asset stays a file.
    assetsInlineLimit: 0,
    // The polyfill is an inline <script> in index.html, which the CSP forbids; every browser we support has modulepreload.
    modulePreload: { polyfill: false },
    sourcemap: false,
    // .vite/manifest.json: which chunks each screen loads, for the size check (test/e2e/dashboard-build.test.ts).
    manifest: true,
    target: 'es2022',
    reportCompressedSize: false,
  },
});
