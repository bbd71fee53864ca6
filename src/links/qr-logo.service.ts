import { ConflictError, NotFoundError } from '../platform/errors.ts';
import { checkLogo, type QrLogoType } from './qr-logo.image.ts';
import type { QrLogo as QrLogoView } from './qr-logo.schemas.ts';
import type { QrLogoDoc, QrLogoStore } from './qr-logo.store.ts';
import type { QrLogo } from './qr.ts';

/** The workspace's QR logo: upload (checked), read back, remove, and hand to the QR renderer. */
export class QrLogoService {
  private readonly store: QrLogoStore;
  private readonly now: () => Date;

  constructor(store: QrLogoStore, now: () => Date = () => new Date()) {
    this.store = store;
    this.now = now;
  }

  async put(workspaceId: string, contentType: QrLogoType, base64: string): Promise<QrLogoView> {
    const logo = checkLogo(contentType, Buffer.from(base64, 'base64'));
    const doc: QrLogoDoc = {
      _id: workspaceId,
      workspace_id: workspaceId,
      content_type: logo.contentType,
      data: logo.data,
      width: logo.width,
      height: logo.height,
      bytes: logo.data.length,
      sha256: logo.sha256,
      updated_at: this.now(),
    };
    await this.store.put(doc);
    return view(doc);
  }

  async get(workspaceId: string): Promise<QrLogoView> {
    const doc = await this.store.get(workspaceId);
    if (doc === null) throw new NotFoundError('QR logo');
    return view(doc);
  }

  async delete(workspaceId: string): Promise<void> {
    if (!(await this.store.delete(workspaceId))) throw new NotFoundError('QR logo');
  }

  /**
   * The logo for a QR render: its hash keys the render cache, and its bytes are read only on a cache miss, by hash,
   * so a render never draws a logo other than the one its key names. No logo uploaded is a state conflict (409).
   */
  async forRender(workspaceId: string): Promise<QrLogo> {
    const meta = await this.store.meta(workspaceId);
    if (meta === null) throw new ConflictError('The workspace has no QR logo: upload one with PUT /v1/workspace/qr-logo, or ask without logo=true.');
    return {
      sha256: meta.sha256,
      contentType: meta.content_type,
      load: async () => {
        const bytes = await this.store.bytes(workspaceId, meta.sha256);
        if (bytes === null) throw new ConflictError('The QR logo was replaced or removed while the code was drawn; ask again.');
        return bytes;
      },
    };
  }
}

function view(doc: QrLogoDoc): QrLogoView {
  return {
    content_type: doc.content_type,
    data: doc.data.toString('base64'),
    width: doc.width,
    height: doc.height,
    bytes: doc.bytes,
    sha256: doc.sha256,
    updated_at: doc.updated_at.toISOString(),
  };
}
