// Obtains a certificate for one hostname from an ACME CA (Let's Encrypt, or Pebble in the tests) through the HTTP-01
// challenge, with the maintained client `acme-client`. The challenge answer goes into MongoDB, where every redirect
// replica reads it (whichever one the CA reaches answers); it is removed once the CA has made up its mind.
import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { rootCertificates } from 'node:tls';
import type * as AcmeClient from 'acme-client';
import type { Client, Order } from 'acme-client';
import type { Logger } from '../platform/logger.ts';
import type { SecretBox } from '../webhooks/secret-box.ts';
import type { DomainTlsStore } from './tls.store.ts';

export { ACME_ACCOUNT_SEAL_PURPOSE, TLS_KEY_SEAL_PURPOSE } from './tls.store.ts';

export interface IssuedCertificate {
  /** Leaf then chain, PEM. */
  pem: string;
  keyPem: string;
  notBefore: Date;
  notAfter: Date;
  issuer: string;
}

/** The CA refused or failed: `reason` is stable (PascalCase), `message` says what the CA said. */
export class IssuanceError extends Error {
  readonly reason: string;
  constructor(reason: string, message: string, cause?: unknown) {
    super(message, { cause });
    this.name = 'IssuanceError';
    this.reason = reason;
  }
}

export interface CertificateIssuer {
  issue(hostname: string): Promise<IssuedCertificate>;
}

export interface AcmeIssuerOptions {
  directoryUrl: string;
  contactEmail: string | null;
  /** Extra PEM roots trusted for the directory's HTTPS (a test CA); the system's roots are kept. */
  caFile: string | null;
  store: DomainTlsStore;
  /** Seals the account key at rest (purpose `acme-account-key`). */
  box: SecretBox;
  logger: Logger;
  /** How long an HTTP-01 answer stays readable (the order's validation must finish within it). */
  challengeTtlMs?: number;
}

type AcmeModule = typeof AcmeClient;

export class AcmeIssuer implements CertificateIssuer {
  private readonly o: AcmeIssuerOptions;
  private client: Client | null = null;
  /** acme-client (with axios and node-forge) is loaded at the first order, not with every worker. */
  private module: Promise<AcmeModule> | null = null;

  constructor(options: AcmeIssuerOptions) {
    this.o = options;
  }

  private acme(): Promise<AcmeModule> {
    this.module ??= import('acme-client').then((loaded) => {
      const acme = (loaded as AcmeModule & { default?: AcmeModule }).default ?? loaded;
      if (this.o.caFile !== null) {
        // acme-client talks through one shared axios instance; this process has one directory, so its agent is ours.
        acme.axios.defaults.httpsAgent = new Agent({ ca: [...rootCertificates, readFileSync(this.o.caFile, 'utf8')], keepAlive: true });
      }
      return acme;
    });
    return this.module;
  }

  async issue(hostname: string): Promise<IssuedCertificate> {
    const acme = await this.acme();
    const client = await this.account();
    let order: Order;
    try {
      order = await client.createOrder({ identifiers: [{ type: 'dns', value: hostname }] });
    } catch (error) {
      throw new IssuanceError('OrderRefused', `The CA refused an order for ${hostname}: ${messageOf(error)}`, error);
    }
    const authorizations = await client.getAuthorizations(order);
    for (const authz of authorizations) {
      if (authz.status === 'valid') continue;
      const challenge = authz.challenges.find((c) => c.type === 'http-01');
      if (!challenge) throw new IssuanceError('NoHttpChallenge', `The CA offers no HTTP-01 challenge for ${authz.identifier.value}`);
      const keyAuthorization = await client.getChallengeKeyAuthorization(challenge);
      await this.o.store.putChallenge({
        _id: challenge.token,
        hostname: authz.identifier.value,
        key_authorization: keyAuthorization,
        expires_at: new Date(Date.now() + (this.o.challengeTtlMs ?? 10 * 60_000)),
      });
      try {
        await client.completeChallenge(challenge);
        await client.waitForValidStatus(authz);
      } catch (error) {
        throw new IssuanceError('ChallengeFailed', `HTTP-01 validation of ${authz.identifier.value} failed: ${messageOf(error)}`, error);
      } finally {
        await this.o.store.removeChallenge(challenge.token).catch(() => undefined);
      }
    }
    const [key, csr] = await acme.crypto.createCsr({ commonName: hostname, altNames: [hostname] }, await acme.crypto.createPrivateEcdsaKey());
    let pem: string;
    try {
      const finalized = await client.finalizeOrder(order, csr);
      pem = await client.getCertificate(finalized);
    } catch (error) {
      throw new IssuanceError('FinalizeFailed', `The CA did not issue the certificate for ${hostname}: ${messageOf(error)}`, error);
    }
    const info = acme.crypto.readCertificateInfo(pem);
    return { pem, keyPem: key.toString(), notBefore: info.notBefore, notAfter: info.notAfter, issuer: info.issuer.commonName };
  }

  /** The client with this installation's account: its key made once, sealed in MongoDB, shared by every replica. */
  private async account(): Promise<Client> {
    if (this.client) return this.client;
    const acme = await this.acme();
    const { directoryUrl, store, box } = this.o;
    let doc = await store.account(directoryUrl);
    if (!doc) {
      const key = (await acme.crypto.createPrivateEcdsaKey()).toString();
      doc = await store.claimAccount({ _id: directoryUrl, key_sealed: box.seal(key, directoryUrl), account_url: null, created_at: new Date() });
    }
    const client = new acme.Client({
      directoryUrl,
      accountKey: box.open(doc.key_sealed, directoryUrl),
      ...(doc.account_url ? { accountUrl: doc.account_url } : {}),
      // Status polls: soon at first (a CA validates in seconds), at most every 10 s.
      backoffAttempts: 12,
      backoffMin: 250,
      backoffMax: 10_000,
    });
    if (!doc.account_url) {
      try {
        await client.createAccount({ termsOfServiceAgreed: true, ...(this.o.contactEmail ? { contact: [`mailto:${this.o.contactEmail}`] } : {}) });
      } catch (error) {
        throw new IssuanceError('AccountRefused', `The CA refused the ACME account: ${messageOf(error)}`, error);
      }
      await store.setAccountUrl(directoryUrl, client.getAccountUrl());
      this.o.logger.info({ directory: directoryUrl }, 'ACME account registered');
    }
    this.client = client;
    return client;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
