import type { Binary, Collection, Db } from 'mongodb';
import type { QrLogoType } from './qr-logo.image.ts';

/** The workspace's QR logo: one document per workspace, its `_id` the workspace id. */
export interface QrLogoDoc {
  _id: string;
  workspace_id: string;
  content_type: QrLogoType;
  data: Buffer;
  width: number;
  height: number;
  bytes: number;
  sha256: string;
  updated_at: Date;
}

export type QrLogoMeta = Omit<QrLogoDoc, 'data'>;

export class QrLogoStore {
  readonly collection: Collection<QrLogoDoc>;

  constructor(db: Db) {
    this.collection = db.collection<QrLogoDoc>('qr_logos');
  }

  async put(doc: QrLogoDoc): Promise<void> {
    await this.collection.replaceOne({ _id: doc.workspace_id, workspace_id: doc.workspace_id }, doc, { upsert: true });
  }

  async get(workspaceId: string): Promise<QrLogoDoc | null> {
    return withBuffer(await this.collection.findOne({ _id: workspaceId, workspace_id: workspaceId }));
  }

  /** Without the bytes: what a QR request needs to know whether its render is cached. */
  meta(workspaceId: string): Promise<QrLogoMeta | null> {
    return this.collection.findOne<QrLogoMeta>({ _id: workspaceId, workspace_id: workspaceId }, { projection: { data: 0 } });
  }

  /** The bytes of exactly this logo, or null once it has been replaced or deleted. */
  async bytes(workspaceId: string, sha256: string): Promise<Buffer | null> {
    const doc = withBuffer(await this.collection.findOne({ _id: workspaceId, workspace_id: workspaceId, sha256 }));
    return doc?.data ?? null;
  }

  async delete(workspaceId: string): Promise<boolean> {
    const result = await this.collection.deleteOne({ _id: workspaceId, workspace_id: workspaceId });
    return result.deletedCount === 1;
  }
}

/** The driver hands binary fields back as BSON Binary; the rest of the code works with Buffers. */
function withBuffer(doc: QrLogoDoc | null): QrLogoDoc | null {
  if (doc === null) return null;
  const data = doc.data as unknown as Binary | Buffer;
  return { ...doc, data: Buffer.isBuffer(data) ? data : Buffer.from(data.buffer) };
}
