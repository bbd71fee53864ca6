import { createHash } from 'node:crypto';
import { imageSize } from 'image-size';
import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import { ValidationError } from '../platform/errors.ts';

// The workspace's QR logo: checked once when it is uploaded (type by its bytes, size, dimensions, and a full decode),
// so that every later render can draw it. Only PNG and JPEG: an SVG can carry scripts, external references and
// entity bombs, which a browser opening the QR code's SVG would act on; sanitising SVG is a product of its own, and
// the PNG renderer would have to rasterise it anyway.

export const QR_LOGO_TYPES = ['image/png', 'image/jpeg'] as const;
export type QrLogoType = (typeof QR_LOGO_TYPES)[number];
export const QR_LOGO_MAX_BYTES = 100 * 1024;
export const QR_LOGO_MIN_SIDE = 16;
export const QR_LOGO_MAX_SIDE = 1024;

/** Decoded pixels, 8-bit RGBA, rows top down. */
export interface LogoPixels {
  width: number;
  height: number;
  rgba: Uint8Array;
}

export interface CheckedLogo {
  contentType: QrLogoType;
  data: Buffer;
  width: number;
  height: number;
  /** Hex SHA-256 of the bytes: the render cache key and, through the rendered body, the ETag change with it. */
  sha256: string;
}

const SNIFFED: Readonly<Record<string, QrLogoType>> = { png: 'image/png', jpg: 'image/jpeg' };

/** Refuses (422 `validation_failed` on `data` or `content_type`) anything that is not a decodable PNG or JPEG within bounds. */
export function checkLogo(contentType: QrLogoType, data: Buffer): CheckedLogo {
  const refuse = (message: string, path = 'data'): never => {
    throw new ValidationError([{ path, message }]);
  };
  if (data.length === 0) refuse('is empty');
  if (data.length > QR_LOGO_MAX_BYTES) refuse(`is ${data.length} bytes; a QR logo may have at most ${QR_LOGO_MAX_BYTES} bytes (100 KiB)`);
  // The type comes from the bytes (the magic numbers and the header image-size reads), never from the declared type.
  let header: { type?: string | undefined; width?: number | undefined; height?: number | undefined };
  try {
    header = imageSize(data);
  } catch {
    return refuse('is not a PNG or JPEG image');
  }
  const sniffed = header.type === undefined ? undefined : SNIFFED[header.type];
  if (sniffed === undefined) return refuse(`is ${header.type === 'svg' ? 'an SVG image, which is refused (it can carry scripts)' : 'not a PNG or JPEG image'}`);
  if (sniffed !== contentType) refuse(`is ${sniffed}, not ${contentType}`, 'content_type');
  const { width = 0, height = 0 } = header;
  // Checked from the header before decoding: a tiny file can declare a huge image (a decompression bomb).
  if (width < QR_LOGO_MIN_SIDE || height < QR_LOGO_MIN_SIDE || width > QR_LOGO_MAX_SIDE || height > QR_LOGO_MAX_SIDE) {
    refuse(`is ${width}×${height} pixels; each side must be from ${QR_LOGO_MIN_SIDE} to ${QR_LOGO_MAX_SIDE}`);
  }
  let pixels: LogoPixels;
  try {
    pixels = decodeLogo(sniffed, data);
  } catch {
    return refuse(`is a damaged ${sniffed === 'image/png' ? 'PNG' : 'JPEG'} image`);
  }
  if (pixels.width !== width || pixels.height !== height) refuse('has a header that does not match its image');
  return { contentType: sniffed, data, width, height, sha256: createHash('sha256').update(data).digest('hex') };
}

/** Pixels of a logo that `checkLogo` accepted. */
export function decodeLogo(contentType: QrLogoType, data: Buffer): LogoPixels {
  if (contentType === 'image/png') {
    const png = PNG.sync.read(data);
    return { width: png.width, height: png.height, rgba: png.data };
  }
  const image = jpeg.decode(data, { useTArray: true, formatAsRGBA: true, maxResolutionInMP: 2, maxMemoryUsageInMB: 64 });
  return { width: image.width, height: image.height, rgba: image.data };
}
