import { Type, type Static } from '@sinclair/typebox';
import { DateTime, StringEnum, closed } from '../platform/schema.ts';
import { QR_LOGO_MAX_BYTES, QR_LOGO_MAX_SIDE, QR_LOGO_MIN_SIDE, QR_LOGO_TYPES } from './qr-logo.image.ts';

// PUT/GET /workspace/qr-logo: the image QR codes draw with `logo=true`. Bodies are JSON, so the bytes travel base64.

const BASE64_MAX = 4 * Math.ceil(QR_LOGO_MAX_BYTES / 3);
const ContentType = StringEnum(QR_LOGO_TYPES, {
  description: 'PNG or JPEG; it must be the type the bytes are. SVG is refused: it can carry scripts and external references',
});

export const QrLogoUploadSchema = Type.Object(
  {
    content_type: ContentType,
    data: Type.String({
      pattern: '^[A-Za-z0-9+/]*={0,2}$',
      maxLength: BASE64_MAX,
      contentEncoding: 'base64',
      description:
        `The image, base64: at most ${QR_LOGO_MAX_BYTES} bytes (100 KiB) decoded, each side ${QR_LOGO_MIN_SIDE} to ${QR_LOGO_MAX_SIDE} pixels, ` +
        'and a complete image; otherwise 422 `validation_failed` naming `data`',
    }),
  },
  { ...closed, $id: 'QrLogoUpload' },
);
export type QrLogoUpload = Static<typeof QrLogoUploadSchema>;

export const QrLogoSchema = Type.Object(
  {
    content_type: ContentType,
    data: Type.String({ contentEncoding: 'base64', description: 'The image, base64' }),
    width: Type.Integer({ minimum: QR_LOGO_MIN_SIDE, maximum: QR_LOGO_MAX_SIDE, description: 'Pixels' }),
    height: Type.Integer({ minimum: QR_LOGO_MIN_SIDE, maximum: QR_LOGO_MAX_SIDE, description: 'Pixels' }),
    bytes: Type.Integer({ minimum: 1, maximum: QR_LOGO_MAX_BYTES }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'Hex SHA-256 of the image; QR codes drawn with it change their ETag when it changes' }),
    updated_at: DateTime(),
  },
  { ...closed, $id: 'QrLogo' },
);
export type QrLogo = Static<typeof QrLogoSchema>;
