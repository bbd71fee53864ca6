// The API reference at /docs: Redoc renders /v1/openapi.json in the browser. Its standalone bundle is served from
// node_modules by the api itself (no CDN: the page works offline and loads nothing from third parties), under a
// Content-Security-Policy that allows scripts from this origin only.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import type { ApiContext } from './context.ts';

export const REFERENCE_PATH = '/docs';
export const REFERENCE_SCRIPT_PATH = '/docs/assets/redoc.standalone.js';

/**
 * Scripts from this origin only (no inline script, no eval); the page's one script is the bundle. Redoc builds its
 * styles at run time (styled-components) into <style> elements it cannot give a nonce, hence inline styles; search
 * is disabled so no worker from a blob: URL is needed.
 */
export const REFERENCE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

interface Asset {
  body: Buffer;
  gzip: Buffer;
  etag: string;
}

/**
 * The one address the bundle would fetch from elsewhere: the Redocly logo of its sidebar footer, from a CDN. It is
 * pointed at an empty data: URL instead, which fails to load as an image, and Redoc then hides the <img> (its
 * onError). A Redoc release that changes the address makes loading throw rather than silently call the CDN.
 */
const CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';

let script: Asset | null = null;
function loadScript(): Asset {
  if (!script) {
    const source = readFileSync(createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js'), 'utf8');
    if (source.split(CDN_LOGO).length !== 2) throw new Error(`redoc bundle: expected the address ${CDN_LOGO} exactly once`);
    const body = Buffer.from(source.replace(CDN_LOGO, 'data:,'), 'utf8');
    script = { body, gzip: gzipSync(body), etag: `"${createHash('sha256').update(body).digest('base64url')}"` };
  }
  return script;
}

function page(specUrl: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Linkplane API reference</title>
<link rel="icon" href="data:,">
</head><body>
<redoc spec-url="${specUrl}" disable-search="true" hide-download-button="false" native-scrollbars="true"></redoc>
<noscript><p>The API reference needs JavaScript. The OpenAPI document itself is at <a href="${specUrl}">${specUrl}</a>; error codes are described at <a href="/docs/errors">/docs/errors</a>.</p></noscript>
<script src="${REFERENCE_SCRIPT_PATH}"></script>
</body></html>`;
}

/** Answers GET/HEAD /docs and its script; anything else is the caller's. */
export function serveReference(ctx: ApiContext): boolean {
  if (ctx.path === REFERENCE_PATH || ctx.path === `${REFERENCE_PATH}/`) {
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Content-Security-Policy', REFERENCE_CSP);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = page('/v1/openapi.json');
    return true;
  }
  if (ctx.path === REFERENCE_SCRIPT_PATH) {
    const asset = loadScript();
    // Changes only with a release (a new redoc version): cached for a day, then revalidated by its ETag.
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.set('ETag', asset.etag);
    ctx.set('Vary', 'Accept-Encoding');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.status = 200;
    if (ctx.fresh) {
      ctx.status = 304;
      return true;
    }
    ctx.type = 'text/javascript; charset=utf-8';
    if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
      ctx.set('Content-Encoding', 'gzip');
      ctx.body = asset.gzip;
    } else {
      ctx.body = asset.body;
    }
    return true;
  }
  return false;
}
