import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import { brotliCompressSync, gzipSync, constants as zlib } from 'node:zlib';
import type { ApiContext } from '../http/context.ts';

// The dashboard's files (web/dist) served by the api process, same origin as /auth and /v1.

// Images may come from any https origin: the link editor draws a link's social card with the image the networks
// will show (web/src/screens/links/link-preview.tsx). Images run nothing; scripts and connections stay same-origin.
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob: https:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.mjs', '.css', '.json', '.map', '.svg', '.txt', '.webmanifest']);
/** Below this, compression costs more than it saves. */
const MIN_COMPRESS_BYTES = 512;

interface Asset {
  mtimeMs: number;
  size: number;
  type: string;
  etag: string;
  raw: Buffer;
  gzip: Buffer | null;
  br: Buffer | null;
}

const MISSING_BUILD = `The dashboard is not built on this server.

Run \`make deps\` (or \`npm run build:web\`) in the Linkplane checkout, then reload this page.
The API (/v1) works without it.
`;

/**
 * Serves `dir` under /dashboard/: files as they are (hashed ones under assets/ cached for a year, immutable),
 * `index.html` for any other path without a file extension (client-side routing), 503 with a plain explanation when the build is missing.
 * Every answer carries the strict CSP. Files are read once and kept with their compressed forms while unchanged.
 */
export function dashboardStatic(dir: string) {
  const root = resolve(dir);
  const cache = new Map<string, Asset>();

  async function load(file: string): Promise<Asset | null> {
    let info;
    try {
      info = await stat(file);
    } catch {
      return null;
    }
    if (!info.isFile()) return null;
    const cached = cache.get(file);
    if (cached && cached.mtimeMs === info.mtimeMs && cached.size === info.size) return cached;
    const raw = await readFile(file);
    const ext = extname(file).toLowerCase();
    const compress = COMPRESSIBLE.has(ext) && raw.length >= MIN_COMPRESS_BYTES;
    const asset: Asset = {
      mtimeMs: info.mtimeMs,
      size: info.size,
      type: TYPES[ext] ?? 'application/octet-stream',
      etag: `"${createHash('sha256').update(raw).digest('base64url').slice(0, 27)}"`,
      raw,
      gzip: compress ? gzipSync(raw, { level: 9 }) : null,
      br: compress ? brotliCompressSync(raw, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: raw.length } }) : null,
    };
    cache.set(file, asset);
    return asset;
  }

  /** The file a URL path names inside root, or null when it would leave it (`..`, encoded or not) or is malformed. */
  function fileOf(rest: string): string | null {
    let decoded: string;
    try {
      decoded = decodeURIComponent(rest);
    } catch {
      return null;
    }
    if (decoded.includes('\0') || decoded.includes('\\')) return null;
    const file = resolve(join(root, decoded));
    return file === root || file.startsWith(root + sep) ? file : null;
  }

  function send(ctx: ApiContext, asset: Asset, cacheControl: string): void {
    ctx.set('Cache-Control', cacheControl);
    ctx.set('ETag', asset.etag);
    ctx.vary('Accept-Encoding');
    ctx.type = asset.type;
    if (ctx.get('If-None-Match') === asset.etag) {
      ctx.status = 304;
      return;
    }
    const accepted = ctx.acceptsEncodings('br', 'gzip', 'identity');
    ctx.status = 200;
    if (accepted === 'br' && asset.br) {
      ctx.set('Content-Encoding', 'br');
      ctx.body = asset.br;
    } else if (accepted === 'gzip' && asset.gzip) {
      ctx.set('Content-Encoding', 'gzip');
      ctx.body = asset.gzip;
    } else {
      ctx.body = asset.raw;
    }
  }

  function plain(ctx: ApiContext, status: number, text: string): void {
    ctx.status = status;
    ctx.type = 'text/plain; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = text;
  }

  return async function serveDashboard(ctx: ApiContext): Promise<void> {
    ctx.set('Content-Security-Policy', DASHBOARD_CSP);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'same-origin');
    ctx.set('X-Frame-Options', 'DENY');
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.set('Allow', 'GET, HEAD');
      plain(ctx, 405, 'Method not allowed.\n');
      return;
    }
    if (ctx.path === '/dashboard') {
      ctx.redirect(`/dashboard/${ctx.querystring ? `?${ctx.querystring}` : ''}`);
      return;
    }
    const index = await load(join(root, 'index.html'));
    if (!index) {
      plain(ctx, 503, MISSING_BUILD);
      return;
    }
    const rest = ctx.path.slice('/dashboard/'.length);
    if (rest !== '' && rest !== 'index.html') {
      const file = fileOf(rest);
      if (file === null) {
        plain(ctx, 404, 'Not found.\n');
        return;
      }
      const asset = await load(file);
      if (asset) {
        send(ctx, asset, rest.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
        return;
      }
      // A missing hashed file is an old build's, and a missing file name (`favicon.ico`, `robots.txt`) is nobody's:
      // a 404, not the app shell parsed as a script or an image. Page addresses never end in a file extension.
      if (rest.startsWith('assets/') || /\.[A-Za-z0-9]+$/.test(rest)) {
        plain(ctx, 404, 'Not found.\n');
        return;
      }
    }
    send(ctx, index, 'no-cache');
  };
}
