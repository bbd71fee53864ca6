// What the authorization server keeps, in two collections. `oauth_records` holds the OAuth library's own models
// (registered clients, authorisation codes, access and refresh tokens, grants, its sessions and interactions) as
// the library hands them over, under the sha256 of their id: a token's value is its id, so a copy of the database
// holds no usable token. `authorized_apps` is ours: one row per consent a person gave, naming the workspace (or
// partner) and the scopes, which the keys page lists and revokes.
import type { Collection, Db } from 'mongodb';
import type { KeyKind } from '../tenancy/key.store.ts';

export interface OAuthRecordDoc {
  /** `<model>:<sha256 of the id>`. */
  _id: string;
  model: string;
  /** The library's payload without `jti` (the id itself, put back on read). */
  payload: Record<string, unknown>;
  grant_id: string | null;
  /** A session's uid (looked up by it). */
  uid: string | null;
  expires_at: Date | null;
  consumed_at: Date | null;
}

/** An app a person authorised: a client of the authorization server acting in one workspace or partner. */
export interface AuthorizedAppDoc {
  _id: string;
  /** The library's grant: its tokens carry this id. */
  grant_id: string;
  client_id: string;
  client_name: string | null;
  user_id: string;
  kind: KeyKind;
  /** The workspace (`ws_…`) or partner (`ptr_…`) id. */
  target_id: string;
  scopes: string[];
  resource: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export class OAuthStore {
  readonly records: Collection<OAuthRecordDoc>;
  readonly apps: Collection<AuthorizedAppDoc>;

  constructor(db: Db) {
    this.records = db.collection<OAuthRecordDoc>('oauth_records');
    this.apps = db.collection<AuthorizedAppDoc>('authorized_apps');
  }

  async ensureIndexes(): Promise<void> {
    await Promise.all([
      this.records.createIndexes([
        { key: { grant_id: 1 }, name: 'grant_records', sparse: true },
        { key: { uid: 1 }, name: 'session_uid', sparse: true },
        { key: { expires_at: 1 }, name: 'ttl', expireAfterSeconds: 0 },
      ]),
      this.apps.createIndexes([
        { key: { grant_id: 1 }, name: 'grant_unique', unique: true },
        { key: { target_id: 1, created_at: -1 }, name: 'target_apps' },
      ]),
    ]);
  }

  async upsertRecord(doc: OAuthRecordDoc): Promise<void> {
    await this.records.replaceOne({ _id: doc._id }, doc, { upsert: true });
  }

  /** A record still within its lifetime (the TTL index removes expired ones only eventually). */
  findRecord(id: string, now: Date): Promise<OAuthRecordDoc | null> {
    return this.records.findOne({ _id: id, $or: [{ expires_at: null }, { expires_at: { $gt: now } }] });
  }

  findRecordByUid(model: string, uid: string, now: Date): Promise<OAuthRecordDoc | null> {
    return this.records.findOne({ model, uid, $or: [{ expires_at: null }, { expires_at: { $gt: now } }] });
  }

  async consumeRecord(id: string, at: Date): Promise<void> {
    await this.records.updateOne({ _id: id, consumed_at: null }, { $set: { consumed_at: at } });
  }

  async deleteRecord(id: string): Promise<void> {
    await this.records.deleteOne({ _id: id });
  }

  async deleteGrantRecords(grantId: string): Promise<void> {
    await this.records.deleteMany({ grant_id: grantId });
  }

  async insertApp(doc: AuthorizedAppDoc): Promise<void> {
    await this.apps.insertOne(doc);
  }

  findAppByGrant(grantId: string): Promise<AuthorizedAppDoc | null> {
    return this.apps.findOne({ grant_id: grantId });
  }

  findApp(id: string): Promise<AuthorizedAppDoc | null> {
    return this.apps.findOne({ _id: id });
  }

  /** The apps authorised in a workspace or partner, newest first, revoked ones included. */
  listApps(targetId: string): Promise<AuthorizedAppDoc[]> {
    return this.apps.find({ target_id: targetId }).sort({ created_at: -1 }).toArray();
  }

  /** Revokes once: a second call keeps the first time. */
  async revokeApp(filter: { _id: string } | { grant_id: string }, at: Date): Promise<void> {
    await this.apps.updateOne({ ...filter, revoked_at: null }, { $set: { revoked_at: at } });
  }

  async touchApp(id: string, at: Date): Promise<void> {
    await this.apps.updateOne({ _id: id }, { $max: { last_used_at: at } });
  }
}
