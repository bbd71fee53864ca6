import { createHash } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';
import QRCode from 'qrcode';

// QR codes for `GET /links/{id}/qr`: the qrcode library computes the symbol (version, error correction, mask);
// SVG comes straight from its renderer, PNG is rasterised here (see renderPng for why).

export const QR_SIZE_MIN = 64;
export const QR_SIZE_MAX = 2048;
export const QR_MARGIN_MIN = 0;
export const QR_MARGIN_MAX = 16;

export type QrErrorCorrectionLevel = 'L' | 'M' | 'Q' | 'H';
export type QrPreset = 'small' | 'medium' | 'large' | 'print';

export const QR_PRESETS: Readonly<Record<QrPreset, { size: number; margin: number; errorCorrectionLevel: QrErrorCorrectionLevel }>> = Object.freeze({
  small: Object.freeze({ size: 128, margin: 2, errorCorrectionLevel: 'M' }),
  medium: Object.freeze({ size: 256, margin: 4, errorCorrectionLevel: 'M' }),
  large: Object.freeze({ size: 512, margin: 4, errorCorrectionLevel: 'Q' }),
  print: Object.freeze({ size: 1024, margin: 4, errorCorrectionLevel: 'H' }),
});

/** Used when neither `preset` nor `size` is given; with only `size`, its margin and error correction still apply. */
export const QR_DEFAULT_PRESET: QrPreset = 'medium';

export interface QrOptions {
  format: 'png' | 'svg';
  /** Output width and height in pixels (PNG) or the `width`/`height` attributes (SVG); overrides the preset's. */
  size?: number;
  preset?: keyof typeof QR_PRESETS;
  /** Quiet zone in modules; overrides the preset's. */
  margin?: number;
}

export interface QrImage {
  /** Shared with the cache: send it, do not modify it. */
  body: Buffer;
  contentType: 'image/png' | 'image/svg+xml';
  /** Strong validator for `ETag` / `If-None-Match`: same body, same value. */
  etag: string;
  /**
   * Width and height of the image. Equals the requested size, except for a PNG whose symbol plus quiet zone
   * has more modules than the requested size has pixels: it is then drawn at one pixel per module (the smallest
   * image that keeps every module) rather than dropping modules into an unreadable code.
   */
  size: number;
}

interface Resolved {
  format: 'png' | 'svg';
  size: number;
  margin: number;
  errorCorrectionLevel: QrErrorCorrectionLevel;
}

const DARK = '#000000';
const LIGHT = '#ffffff';

// A link's QR code is fetched again and again (dashboards, print shops, embeds), always with the same few
// options, and rendering a 2048-pixel PNG costs milliseconds of CPU on the event loop. The result is a pure
// function of text + options, so a small LRU of recent renders answers hot codes without redrawing them.
// 500 entries of a few KB each (1-bit PNGs and path-only SVGs compress well) bound it to a few MB.
// The cache holds promises so that concurrent requests for the same code share one render.
const CACHE_MAX_ENTRIES = 500;
const cache = new Map<string, Promise<QrImage>>();

export async function renderQr(text: string, options: QrOptions): Promise<QrImage> {
  const resolved = resolve(options);
  const key = JSON.stringify([resolved.format, resolved.size, resolved.margin, resolved.errorCorrectionLevel, text]);
  const hit = cache.get(key);
  if (hit) {
    // Map keeps insertion order: re-inserting makes this entry the most recently used.
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const rendering = render(text, resolved);
  cache.set(key, rendering);
  while (cache.size > CACHE_MAX_ENTRIES) {
    const oldest = cache.keys().next();
    if (oldest.done === true) break;
    cache.delete(oldest.value);
  }
  // A failed render (text too long for a QR code, say) must not stay cached as a rejected promise.
  rendering.catch(() => {
    if (cache.get(key) === rendering) cache.delete(key);
  });
  return rendering;
}

/** For tests: empties the render cache. */
export function clearQrCache(): void {
  cache.clear();
}

function resolve(options: QrOptions): Resolved {
  const { format } = options;
  if (format !== 'png' && format !== 'svg') throw new RangeError(`QR format must be png or svg, got ${String(format)}`);
  const presetName = options.preset ?? QR_DEFAULT_PRESET;
  if (!Object.hasOwn(QR_PRESETS, presetName)) throw new RangeError(`unknown QR preset ${String(presetName)}`);
  const preset = QR_PRESETS[presetName];
  const size = options.size ?? preset.size;
  if (!Number.isInteger(size) || size < QR_SIZE_MIN || size > QR_SIZE_MAX) {
    throw new RangeError(`QR size must be an integer from ${QR_SIZE_MIN} to ${QR_SIZE_MAX}, got ${size}`);
  }
  const margin = options.margin ?? preset.margin;
  if (!Number.isInteger(margin) || margin < QR_MARGIN_MIN || margin > QR_MARGIN_MAX) {
    throw new RangeError(`QR margin must be an integer from ${QR_MARGIN_MIN} to ${QR_MARGIN_MAX}, got ${margin}`);
  }
  return { format, size, margin, errorCorrectionLevel: preset.errorCorrectionLevel };
}

async function render(text: string, options: Resolved): Promise<QrImage> {
  if (options.format === 'svg') {
    const body = Buffer.from(await renderSvg(text, options), 'utf8');
    return Object.freeze({ body, contentType: 'image/svg+xml', etag: strongEtag(body), size: options.size });
  }
  const { body, size } = renderPng(text, options);
  return Object.freeze({ body, contentType: 'image/png', etag: strongEtag(body), size });
}

function strongEtag(body: Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}

// The library's SVG is one `<svg>` element with a background path and one path of module runs; the viewBox is
// the module grid including the quiet zone and `width` sets both width and height. The encoded text never
// appears in the document (only path data), so there is nothing to escape and no way to inject markup.
async function renderSvg(text: string, options: Resolved): Promise<string> {
  const svg = await QRCode.toString(text, {
    type: 'svg',
    errorCorrectionLevel: options.errorCorrectionLevel,
    margin: options.margin,
    width: options.size,
    color: { dark: DARK, light: LIGHT },
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n${svg}`;
}

// The PNG is drawn here from the library's module matrix instead of with QRCode.toBuffer, because toBuffer
// scales by width / modules: a fractional factor, so modules come out 1 or 2 pixels wide, the image can be a
// pixel short of the requested width, and below one pixel per module it ignores the width entirely. Here, as
// in ZXing's writer, each module is a whole number of pixels and the remainder becomes extra, centred quiet
// zone, so the image is exactly `size` square. Black and white only: a 1-bit greyscale PNG, which is also
// far smaller and faster to deflate than the library's 32-bit RGBA (16 MB raw at 2048 pixels).
function renderPng(text: string, options: Resolved): { body: Buffer; size: number } {
  const { modules } = QRCode.create(text, { errorCorrectionLevel: options.errorCorrectionLevel });
  const count = modules.size;
  const grid = count + 2 * options.margin;
  const side = Math.max(options.size, grid);
  const scale = Math.max(1, Math.floor(side / grid));
  const origin = Math.floor((side - grid * scale) / 2) + options.margin * scale;

  // Scanlines: one filter byte (0, none) then 1 bit per pixel, 1 = white; unused trailing bits are ignored.
  const stride = 1 + Math.ceil(side / 8);
  const raw = Buffer.alloc(stride * side, 0xff);
  for (let y = 0; y < side; y++) raw[y * stride] = 0;
  for (let row = 0; row < count; row++) {
    const first = (origin + row * scale) * stride;
    for (let col = 0; col < count; col++) {
      if (!modules.get(row, col)) continue;
      for (let x = origin + col * scale, end = x + scale; x < end; x++) {
        const at = first + 1 + (x >> 3);
        raw[at] = (raw[at] ?? 0) & ~(0x80 >> (x & 7));
      }
    }
    for (let copy = 1; copy < scale; copy++) raw.copy(raw, first + copy * stride, first, first + stride);
  }

  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header[8] = 1; // bit depth
  header[9] = 0; // colour type: greyscale
  // compression, filter and interlace methods: 0
  const body = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
  return { body, size: side };
}

function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}
