// The OAuth library's storage interface on our store: every model it persists (clients, codes, tokens, grants,
// sessions, interactions) becomes one `oauth_records` row keyed by the sha256 of its id, with the id itself left
// out of the stored payload and put back on read, so the database never holds a usable code or token.
import { createHash } from 'node:crypto';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { OAuthStore } from './oauth.store.ts';

function hashed(model: string, id: string): string {
  return `${model}:${createHash('sha256').update(id).digest('hex')}`;
}

export interface AdapterHooks {
  /** A grant ended in the library (revoked, a refresh token replayed, or its record destroyed). */
  grantEnded(grantId: string): Promise<void>;
  now(): number;
}

export class RecordAdapter implements Adapter {
  private readonly model: string;
  private readonly store: OAuthStore;
  private readonly hooks: AdapterHooks;

  constructor(model: string, store: OAuthStore, hooks: AdapterHooks) {
    this.model = model;
    this.store = store;
    this.hooks = hooks;
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const { jti: _id, ...rest } = payload;
    const now = this.hooks.now();
    await this.store.upsertRecord({
      _id: hashed(this.model, id),
      model: this.model,
      payload: rest,
      grant_id: this.model !== 'Grant' && typeof payload.grantId === 'string' ? payload.grantId : null,
      uid: typeof payload.uid === 'string' ? payload.uid : null,
      expires_at: typeof expiresIn === 'number' ? new Date(now + expiresIn * 1000) : null,
      consumed_at: null,
    });
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const doc = await this.store.findRecord(hashed(this.model, id), new Date(this.hooks.now()));
    if (!doc) return undefined;
    return { ...doc.payload, jti: id, ...(doc.consumed_at ? { consumed: Math.floor(doc.consumed_at.getTime() / 1000) } : {}) };
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const doc = await this.store.findRecordByUid(this.model, uid, new Date(this.hooks.now()));
    // A session found by its uid: its id (the cookie value) is not known here and not needed by the caller.
    return doc ? (doc.payload) : undefined;
  }

  findByUserCode(): Promise<undefined> {
    // The device flow is not enabled: there are no user codes.
    return Promise.resolve(undefined);
  }

  async consume(id: string): Promise<void> {
    await this.store.consumeRecord(hashed(this.model, id), new Date(this.hooks.now()));
  }

  async destroy(id: string): Promise<void> {
    await this.store.deleteRecord(hashed(this.model, id));
    if (this.model === 'Grant') await this.hooks.grantEnded(id);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.store.deleteGrantRecords(grantId);
    await this.hooks.grantEnded(grantId);
  }
}
