import { createHash } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';
import QRCode from 'qrcode';
import { decodeLogo, type LogoPixels, type QrLogoType } from './qr-logo.image.ts';

// QR codes for `GET /links/{id}/qr`: the qrcode library computes the symbol (version, error correction, mask);
// SVG comes straight from its renderer, PNG is rasterised here (see renderPng for why). Styling: module and
// background colours (dark on light, with enough contrast to scan), the error-correction level, and the workspace's
// logo in the centre on a pad of the background colour, drawn over modules the error correction restores.

export const QR_SIZE_MIN = 64;
export const QR_SIZE_MAX = 2048;
export const QR_MARGIN_MIN = 0;
export const QR_MARGIN_MAX = 16;

export const QR_ERROR_CORRECTION_LEVELS = ['L', 'M', 'Q', 'H'] as const;
export type QrErrorCorrectionLevel = (typeof QR_ERROR_CORRECTION_LEVELS)[number];

export const QR_DEFAULT_COLOR = '#000000';
export const QR_DEFAULT_BACKGROUND = '#ffffff';
/**
 * Least WCAG contrast ratio between modules and background. Scanners binarise the image by brightness: below about
 * 3:1 (light grey on white, red on black) phone cameras in ordinary light stop finding the finder patterns. 4.5:1 is
 * the WCAG figure for small text; QR modules are large, so the 3:1 of large text and graphics applies.
 */
export const QR_MIN_CONTRAST = 3;
/**
 * Least difference in brightness as scanners compute it: luma of the gamma-encoded sRGB values (Rec. 709 weights,
 * which jsQR uses; ZXing's (R + 2G + B) / 4 is close), as a share of full scale. The WCAG ratio alone lets dark pairs
 * through (#332f36 on #d117f8 is 3.2:1 but only 30 of 255 apart, and jsQR's binariser, like ZXing's, ignores
 * differences under 24): 40 % keeps such pairs out and leaves room for what a camera loses.
 */
export const QR_MIN_LUMA_DIFFERENCE = 0.4;

/**
 * With a logo the level is raised to at least Q, and the logo's pad (of the background colour, in the centre, a whole
 * odd number of modules) covers at most this share of the symbol. Every module the pad touches is a damaged codeword,
 * and a codeword is 8 modules in a two-wide column, so the damage is about twice the area: measured with jsQR over
 * versions 1 to 23, pads up to 11 % decode at Q and H alike, and 13 % already fails some versions (13 at H, 3 and 14
 * at Q). 10 % keeps a margin for print and camera defects; H adds more margin, not a bigger logo.
 */
export const QR_LOGO_SHARE = 0.1;
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
  /** Overrides the preset's level; a logo raises it to at least Q. */
  errorCorrectionLevel?: QrErrorCorrectionLevel;
  /** Modules, `#rrggbb`: must be darker than the background by QR_MIN_CONTRAST (see qrColourProblem). */
  color?: string;
  /** Quiet zone, light modules and the logo's pad, `#rrggbb`. */
  background?: string;
  logo?: QrLogo;
}

/** The workspace's logo: its hash names it in the cache key, its bytes are read only when a render needs them. */
export interface QrLogo {
  sha256: string;
  contentType: QrLogoType;
  load: () => Promise<Buffer>;
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
  color: string;
  background: string;
  logo: QrLogo | null;
}

/** With its pixels, once loaded. */
interface Drawing extends Resolved {
  logoImage: { contentType: QrLogoType; data: Buffer; pixels: LogoPixels } | null;
}

/** WCAG 2 relative luminance of `#rrggbb`, 0 (black) to 1 (white). */
export function relativeLuminance(hex: string): number {
  const channel = (at: number): number => {
    const c = Number.parseInt(hex.slice(at, at + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/** Brightness as a scanner binarises it, 0 to 1: Rec. 709 luma of the gamma-encoded channels. */
export function scannerLuma(hex: string): number {
  const channel = (at: number): number => Number.parseInt(hex.slice(at, at + 2), 16) / 255;
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/** WCAG 2 contrast ratio, 1 to 21. */
export function contrastRatio(a: string, b: string): number {
  const [light, dark] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

/**
 * Why a colour pair cannot be scanned, or null: the modules must be darker, by a WCAG ratio of QR_MIN_CONTRAST and
 * by QR_MIN_LUMA_DIFFERENCE of brightness as scanners see it. Inverted codes (light modules on a dark background) are refused:
 * the standard allows them, but many phone scanners and most print-shop checkers read only dark-on-light.
 */
export function qrColourProblem(color: string, background: string): string | null {
  if (relativeLuminance(color) >= relativeLuminance(background)) {
    return `the modules (${color}) must be darker than the background (${background}): inverted codes do not scan everywhere`;
  }
  const ratio = contrastRatio(color, background);
  if (ratio < QR_MIN_CONTRAST) {
    return `the contrast of ${color} on ${background} is ${ratio.toFixed(2)}:1; at least ${QR_MIN_CONTRAST}:1 is needed to scan`;
  }
  const apart = scannerLuma(background) - scannerLuma(color);
  if (apart < QR_MIN_LUMA_DIFFERENCE) {
    return `${color} and ${background} are ${Math.round(apart * 100)} % apart in brightness; scanners need at least ${QR_MIN_LUMA_DIFFERENCE * 100} %`;
  }
  return null;
}

const HEX_COLOUR = /^#[0-9a-f]{6}$/;

// A link's QR code is fetched again and again (dashboards, print shops, embeds), always with the same few
// options, and rendering a 2048-pixel PNG costs milliseconds of CPU on the event loop. The result is a pure
// function of text + options, so a small LRU of recent renders answers hot codes without redrawing them.
// 500 entries of a few KB each (1-bit PNGs and path-only SVGs compress well) bound it to a few MB.
// The cache holds promises so that concurrent requests for the same code share one render.
const CACHE_MAX_ENTRIES = 500;
const cache = new Map<string, Promise<QrImage>>();

export async function renderQr(text: string, options: QrOptions): Promise<QrImage> {
  const resolved = resolve(options);
  // Every option that changes the image is in the key; the logo by the hash of its bytes, so a new logo is a new entry.
  const key = JSON.stringify([
    resolved.format, resolved.size, resolved.margin, resolved.errorCorrectionLevel, resolved.color, resolved.background, resolved.logo?.sha256 ?? null, text,
  ]);
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
  const requested = options.errorCorrectionLevel ?? preset.errorCorrectionLevel;
  if (!QR_ERROR_CORRECTION_LEVELS.includes(requested)) throw new RangeError(`QR error correction must be L, M, Q or H, got ${String(requested)}`);
  const logo = options.logo ?? null;
  // A logo hides modules: at least Q restores them.
  const errorCorrectionLevel = logo !== null && (requested === 'L' || requested === 'M') ? 'Q' : requested;
  const color = (options.color ?? QR_DEFAULT_COLOR).toLowerCase();
  const background = (options.background ?? QR_DEFAULT_BACKGROUND).toLowerCase();
  if (!HEX_COLOUR.test(color) || !HEX_COLOUR.test(background)) throw new RangeError('QR colours must be #rrggbb');
  const problem = qrColourProblem(color, background);
  if (problem !== null) throw new RangeError(problem);
  return { format, size, margin, errorCorrectionLevel, color, background, logo };
}

async function render(text: string, resolved: Resolved): Promise<QrImage> {
  let logoImage: Drawing['logoImage'] = null;
  if (resolved.logo !== null) {
    const data = await resolved.logo.load();
    logoImage = { contentType: resolved.logo.contentType, data, pixels: decodeLogo(resolved.logo.contentType, data) };
  }
  const options: Drawing = { ...resolved, logoImage };
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

/** The logo's pad in modules: centred, a whole odd number of modules wide so it sits on the module grid. */
export function logoPad(count: number): { start: number; side: number } {
  let side = Math.floor(count * Math.sqrt(QR_LOGO_SHARE));
  if (side % 2 === 0) side -= 1;
  return { start: (count - side) / 2, side };
}

// The library's SVG is one `<svg>` element with a background path and one path of module runs; the viewBox is
// the module grid including the quiet zone and `width` sets both width and height. The encoded text never
// appears in the document (only path data and our own #rrggbb colours), so there is nothing to escape and no way
// to inject markup. A logo is a pad of the background colour over the centre modules and an `<image>` with the
// uploaded bytes as a data: URI (PNG or JPEG only, checked at upload: never markup of the workspace's own).
async function renderSvg(text: string, options: Drawing): Promise<string> {
  const svg = await QRCode.toString(text, {
    type: 'svg',
    errorCorrectionLevel: options.errorCorrectionLevel,
    margin: options.margin,
    width: options.size,
    color: { dark: options.color, light: options.background },
  });
  const head = '<?xml version="1.0" encoding="UTF-8"?>\n';
  if (options.logoImage === null) return `${head}${svg}`;
  const count = QRCode.create(text, { errorCorrectionLevel: options.errorCorrectionLevel }).modules.size;
  const pad = logoPad(count);
  const at = options.margin + pad.start;
  const inset = 0.5;
  const { contentType, data } = options.logoImage;
  const overlay =
    `<rect x="${at}" y="${at}" width="${pad.side}" height="${pad.side}" fill="${options.background}"/>` +
    `<image x="${at + inset}" y="${at + inset}" width="${pad.side - 2 * inset}" height="${pad.side - 2 * inset}" ` +
    `preserveAspectRatio="xMidYMid meet" href="data:${contentType};base64,${data.toString('base64')}"/>`;
  const end = svg.lastIndexOf('</svg>');
  return `${head}${svg.slice(0, end)}${overlay}${svg.slice(end)}`;
}

// The PNG is drawn here from the library's module matrix instead of with QRCode.toBuffer, because toBuffer
// scales by width / modules: a fractional factor, so modules come out 1 or 2 pixels wide, the image can be a
// pixel short of the requested width, and below one pixel per module it ignores the width entirely. Here, as
// in ZXing's writer, each module is a whole number of pixels and the remainder becomes extra, centred quiet
// zone, so the image is exactly `size` square. Without a logo the image has two colours: a 1-bit PNG (greyscale
// for black on white, else a two-entry palette), far smaller and faster to deflate than the library's 32-bit RGBA
// (16 MB raw at 2048 pixels). With a logo it is 8-bit RGB.
function renderPng(text: string, options: Drawing): { body: Buffer; size: number } {
  const { modules } = QRCode.create(text, { errorCorrectionLevel: options.errorCorrectionLevel });
  const count = modules.size;
  const grid = count + 2 * options.margin;
  const side = Math.max(options.size, grid);
  const scale = Math.max(1, Math.floor(side / grid));
  const origin = Math.floor((side - grid * scale) / 2) + options.margin * scale;
  const geometry = { count, side, scale, origin };
  const { header, raw } = options.logoImage === null
    ? twoColourScanlines(modules, geometry, options)
    : rgbScanlines(modules, geometry, options, options.logoImage.pixels);
  const body = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header.ihdr),
    ...(header.palette ? [chunk('PLTE', header.palette)] : []),
    chunk('IDAT', deflateSync(raw, { level: header.palette || header.ihdr[9] === 0 ? 9 : 6 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
  return { body, size: side };
}

interface Modules {
  get(row: number, col: number): number | boolean;
}

interface Geometry {
  count: number;
  side: number;
  scale: number;
  origin: number;
}

interface Scanlines {
  header: { ihdr: Buffer; palette?: Buffer };
  raw: Buffer;
}

function ihdr(side: number, bitDepth: number, colourType: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header[8] = bitDepth;
  header[9] = colourType;
  // compression, filter and interlace methods: 0
  return header;
}

function rgb(hex: string): [number, number, number] {
  return [Number.parseInt(hex.slice(1, 3), 16), Number.parseInt(hex.slice(3, 5), 16), Number.parseInt(hex.slice(5, 7), 16)];
}

function twoColourScanlines(modules: Modules, { count, side, scale, origin }: Geometry, options: Drawing): Scanlines {
  // Scanlines: one filter byte (0, none) then 1 bit per pixel, 1 = background; unused trailing bits are ignored.
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
  // Black on white stays greyscale (the bytes of codes drawn before colours existed); other colours are index 0
  // (modules) and 1 (background) of a palette.
  if (options.color === QR_DEFAULT_COLOR && options.background === QR_DEFAULT_BACKGROUND) return { header: { ihdr: ihdr(side, 1, 0) }, raw };
  return { header: { ihdr: ihdr(side, 1, 3), palette: Buffer.from([...rgb(options.color), ...rgb(options.background)]) }, raw };
}

function rgbScanlines(modules: Modules, { count, side, scale, origin }: Geometry, options: Drawing, logo: LogoPixels): Scanlines {
  const row3 = side * 3;
  const image = Buffer.alloc(row3 * side);
  const light = rgb(options.background);
  const dark = Buffer.from(rgb(options.color));
  image.fill(Buffer.from(light));
  for (let row = 0; row < count; row++) {
    const first = (origin + row * scale) * row3;
    for (let col = 0; col < count; col++) {
      if (!modules.get(row, col)) continue;
      const x = origin + col * scale;
      image.fill(dark, first + x * 3, first + (x + scale) * 3);
    }
    for (let copy = 1; copy < scale; copy++) image.copy(image, first + copy * row3, first, first + row3);
  }

  // The pad: background colour over the centre modules, then the logo fitted inside it, keeping its proportions.
  const pad = logoPad(count);
  const padAt = origin + pad.start * scale;
  const padSide = pad.side * scale;
  const padRow = Buffer.alloc(padSide * 3);
  padRow.fill(Buffer.from(light));
  for (let y = padAt; y < padAt + padSide; y++) padRow.copy(image, y * row3 + padAt * 3);
  const inset = Math.max(1, Math.round(scale / 2));
  const box = padSide - 2 * inset;
  const fitWidth = logo.width >= logo.height ? box : Math.max(1, Math.round((box * logo.width) / logo.height));
  const fitHeight = logo.width >= logo.height ? Math.max(1, Math.round((box * logo.height) / logo.width)) : box;
  const left = padAt + inset + Math.floor((box - fitWidth) / 2);
  const top = padAt + inset + Math.floor((box - fitHeight) / 2);
  drawLogo(image, row3, { left, top, width: fitWidth, height: fitHeight }, logo, light);

  // Filter Up on every row: rows repeated for a module's height become zeros, which deflate to almost nothing.
  const raw = Buffer.alloc((row3 + 1) * side);
  for (let y = 0; y < side; y++) {
    const out = y * (row3 + 1);
    raw[out] = 2;
    const at = y * row3;
    if (y === 0) {
      image.copy(raw, out + 1, 0, row3);
      continue;
    }
    for (let i = 0; i < row3; i++) raw[out + 1 + i] = ((image[at + i] ?? 0) - (image[at - row3 + i] ?? 0)) & 0xff;
  }
  return { header: { ihdr: ihdr(side, 8, 2) }, raw };
}

/** Area-averaged resampling (nearest when enlarging), composited over the background by the logo's alpha. */
function drawLogo(image: Buffer, row3: number, to: { left: number; top: number; width: number; height: number }, logo: LogoPixels, background: [number, number, number]): void {
  const { rgba } = logo;
  for (let dy = 0; dy < to.height; dy++) {
    const sy0 = Math.floor((dy * logo.height) / to.height);
    const sy1 = Math.max(sy0 + 1, Math.floor(((dy + 1) * logo.height) / to.height));
    for (let dx = 0; dx < to.width; dx++) {
      const sx0 = Math.floor((dx * logo.width) / to.width);
      const sx1 = Math.max(sx0 + 1, Math.floor(((dx + 1) * logo.width) / to.width));
      let r = 0;
      let g = 0;
      let b = 0;
      let a = 0;
      for (let sy = sy0; sy < sy1; sy++) {
        for (let sx = sx0, at = (sy * logo.width + sx0) * 4; sx < sx1; sx++, at += 4) {
          const alpha = rgba[at + 3] ?? 0;
          r += (rgba[at] ?? 0) * alpha;
          g += (rgba[at + 1] ?? 0) * alpha;
          b += (rgba[at + 2] ?? 0) * alpha;
          a += alpha;
        }
      }
      const n = (sy1 - sy0) * (sx1 - sx0);
      const coverage = a / (255 * n);
      const out = (to.top + dy) * row3 + (to.left + dx) * 3;
      const blend = (sum: number, under: number): number => Math.round((a === 0 ? 0 : (sum / a) * coverage) + under * (1 - coverage));
      image[out] = blend(r, background[0]);
      image[out + 1] = blend(g, background[1]);
      image[out + 2] = blend(b, background[2]);
    }
  }
}

function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}
