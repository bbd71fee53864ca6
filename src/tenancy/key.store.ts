import type { Collection, Db } from 'mongodb';

export type KeyKind = 'workspace' | 'partner';

export interface ApiKeyDoc {
  _id: string;
  kind: KeyKind;
  workspace_id: string | null;
  partner_id: string | null;
  name: string | null;
  /** The first characters of the key, enough to recognise it in a list; the rest exists only as `key_hash`. */
  prefix: string;
  key_hash: string;
  scopes: string[];
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

export class KeyStore {
  readonly collection: Collection<ApiKeyDoc>;
  constructor(db: Db) {
    this.collection = db.collection<ApiKeyDoc>('api_keys');
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([
      { key: { key_hash: 1 }, name: 'key_hash_unique', unique: true },
      { key: { workspace_id: 1, created_at: -1 }, name: 'workspace_keys' },
      { key: { partner_id: 1, created_at: -1 }, name: 'partner_keys' },
    ]);
  }

  async insert(doc: ApiKeyDoc): Promise<void> {
    await this.collection.insertOne(doc);
  }

  findByHash(hash: string): Promise<ApiKeyDoc | null> {
    return this.collection.findOne({ key_hash: hash });
  }

  findById(id: string): Promise<ApiKeyDoc | null> {
    return this.collection.findOne({ _id: id });
  }

  list(filter: { workspace_id?: string; partner_id?: string }): Promise<ApiKeyDoc[]> {
    return this.collection.find(filter, { projection: { key_hash: 0 } }).sort({ created_at: -1 }).toArray();
  }

  /** Revokes once: a second call keeps the first revocation time. Returns the key, or null if it does not exist. */
  async revoke(id: string, at: Date): Promise<ApiKeyDoc | null> {
    await this.collection.updateOne({ _id: id, revoked_at: null }, { $set: { revoked_at: at } });
    return this.findById(id);
  }

  async touch(id: string, at: Date): Promise<void> {
    await this.collection.updateOne({ _id: id }, { $max: { last_used_at: at } });
  }
}
