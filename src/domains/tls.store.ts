// What self-managed TLS keeps in MongoDB, shared by every replica: per custom domain its provisioning state (DNS
// checks, issuance attempts) and its certificate (the private key sealed), the HTTP-01 challenge answers the redirect
// serves while an order is open, and the ACME account (its key sealed). Nothing here is read on the redirect's hot
// path but the certificate, once per host, into the SNI cache.
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from '../platform/errors.ts';

/** Purpose names of the sealed values (HKDF info): a key sealed for one use never opens for another. */
export const ACME_ACCOUNT_SEAL_PURPOSE = 'acme-account-key/v1';
export const TLS_KEY_SEAL_PURPOSE = 'tls-private-key/v1';

export interface StoredCertificate {
  /** The leaf followed by its chain, PEM. */
  pem: string;
  /** The private key (PEM), sealed with SecretBox under the domain id: a dump of the collection reveals no key. */
  key_sealed: string;
  not_before: Date;
  not_after: Date;
  /** When it is to be renewed (a fixed part of its lifetime, TLS_RENEW_AT_PERCENT). */
  renew_after: Date;
  issuer: string;
  issued_at: Date;
}

/** A step retried with backoff: how many attempts so far, when the next is due, what the last one said. */
export interface Attempts {
  attempts: number;
  first_at: Date;
  next_at: Date;
  last_error: string | null;
}

export interface DomainTlsDoc {
  /** The domain id. */
  _id: string;
  hostname: string;
  /** DNS checks of a pending domain; absent before the first one. */
  dns?: Attempts;
  /** Failed issuances or renewals since the last success; absent (or null) when the last one succeeded. */
  issuance?: Attempts | null;
  certificate?: StoredCertificate | null;
  /** Certificates obtained for this domain so far (the first one and its renewals). */
  issued_count?: number;
  updated_at: Date;
}

export interface ChallengeDoc {
  /** The HTTP-01 token (the last path segment the CA asks for). */
  _id: string;
  hostname: string;
  key_authorization: string;
  expires_at: Date;
}

export interface AcmeAccountDoc {
  /** The directory URL: one account per CA. */
  _id: string;
  key_sealed: string;
  account_url: string | null;
  created_at: Date;
}

export class DomainTlsStore {
  readonly domains: Collection<DomainTlsDoc>;
  readonly challenges: Collection<ChallengeDoc>;
  readonly accounts: Collection<AcmeAccountDoc>;

  constructor(db: Db) {
    this.domains = db.collection<DomainTlsDoc>('domain_tls');
    this.challenges = db.collection<ChallengeDoc>('acme_challenges');
    this.accounts = db.collection<AcmeAccountDoc>('acme_accounts');
  }

  async ensureIndexes(): Promise<void> {
    await Promise.all([
      this.domains.createIndexes([
        { key: { hostname: 1 }, name: 'hostname' },
        { key: { 'certificate.renew_after': 1 }, name: 'renew_after' },
      ]),
      // A challenge left behind by a crashed order goes by itself.
      this.challenges.createIndexes([{ key: { expires_at: 1 }, name: 'ttl', expireAfterSeconds: 0 }]),
    ]);
  }

  get(domainId: string): Promise<DomainTlsDoc | null> {
    return this.domains.findOne({ _id: domainId });
  }

  /** The certificate to serve for a host, if any (the caller checks the domain is active). */
  async certificateFor(hostname: string): Promise<{ domainId: string; certificate: StoredCertificate } | null> {
    const doc = await this.domains.findOne({ hostname, certificate: { $type: 'object' } }, { sort: { updated_at: -1 } });
    return doc?.certificate ? { domainId: doc._id, certificate: doc.certificate } : null;
  }

  async update(domainId: string, hostname: string, set: Partial<Omit<DomainTlsDoc, '_id' | 'hostname'>>, now: Date, inc?: { issued_count: number }): Promise<void> {
    await this.domains.updateOne(
      { _id: domainId },
      { $set: { ...set, hostname, updated_at: now }, ...(inc ? { $inc: inc } : {}) },
      { upsert: true },
    );
  }

  /** Certificates whose renewal is due and not waiting for a retry, oldest first. */
  dueForRenewal(now: Date, limit: number): Promise<DomainTlsDoc[]> {
    return this.domains
      .find({ 'certificate.renew_after': { $lte: now }, $or: [{ issuance: null }, { issuance: { $exists: false } }, { 'issuance.next_at': { $lte: now } }] })
      .sort({ 'certificate.renew_after': 1 })
      .limit(limit)
      .toArray();
  }

  async remove(domainId: string): Promise<void> {
    await this.domains.deleteOne({ _id: domainId });
  }

  /** The rows whose domain is gone (deleted while this mode was off, or by a crash between the two deletes). */
  async orphans(existing: (ids: string[]) => Promise<Set<string>>, limit: number): Promise<DomainTlsDoc[]> {
    const docs = await this.domains.find({}, { projection: { _id: 1, hostname: 1 } }).limit(limit).toArray();
    const alive = await existing(docs.map((d) => d._id));
    return docs.filter((d) => !alive.has(d._id));
  }

  async putChallenge(doc: ChallengeDoc): Promise<void> {
    await this.challenges.replaceOne({ _id: doc._id }, doc, { upsert: true });
  }

  async removeChallenge(token: string): Promise<void> {
    await this.challenges.deleteOne({ _id: token });
  }

  /** The key authorization the CA expects at /.well-known/acme-challenge/<token> on this host; null: none open. */
  async challenge(token: string, hostname: string, now = new Date()): Promise<string | null> {
    const doc = await this.challenges.findOne({ _id: token, hostname, expires_at: { $gt: now } });
    return doc?.key_authorization ?? null;
  }

  account(directoryUrl: string): Promise<AcmeAccountDoc | null> {
    return this.accounts.findOne({ _id: directoryUrl });
  }

  /** Stores a new account key unless another replica stored one first; answers the one kept. */
  async claimAccount(doc: AcmeAccountDoc): Promise<AcmeAccountDoc> {
    try {
      await this.accounts.insertOne(doc);
      return doc;
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      return (await this.account(doc._id))!;
    }
  }

  async setAccountUrl(directoryUrl: string, accountUrl: string): Promise<void> {
    await this.accounts.updateOne({ _id: directoryUrl }, { $set: { account_url: accountUrl } });
  }
}
