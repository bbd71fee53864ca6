// Signing secrets at rest. The delivery worker must compute HMACs with them, so they cannot be hashed like API
// keys; they are encrypted with AES-256-GCM under a key derived from SECRET_KEY, which never sits in the database.
// A copy of the `webhooks` collection alone (a backup, a dump) therefore reveals no secret.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { newStandardSecret } from './standard-signature.ts';
import type { SignatureScheme } from './webhook.schemas.ts';

const VERSION = 'v1';
const IV_BYTES = 12;

export class SecretBox {
  private readonly key: Buffer;

  /** `purpose` names the use (webhook signing secrets by default; import credentials pass their own). */
  constructor(masterSecret: string, purpose = 'webhook-signing-secret/v1') {
    // A purpose-specific key: SECRET_KEY also signs click ids and cookies, and HKDF keeps those uses independent.
    this.key = Buffer.from(hkdfSync('sha256', masterSecret, 'linkplane', purpose, 32));
  }

  /**
   * `v1.<iv>.<tag>.<ciphertext>` (base64url). The endpoint id is bound as associated data, so a ciphertext copied
   * onto another endpoint's document fails to open instead of signing for it.
   */
  seal(plaintext: string, endpointId: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(endpointId));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv, cipher.getAuthTag(), ciphertext].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
  }

  open(sealed: string, endpointId: string): string {
    const [version, iv, tag, ciphertext] = sealed.split('.');
    if (version !== VERSION || iv === undefined || tag === undefined || ciphertext === undefined) throw new Error('unknown sealed secret format');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(endpointId));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  }
}

/**
 * `whsec_` and 32 random bytes: 256 bits, the HMAC-SHA256 key size. Base64url for our scheme (the HMAC key is the
 * whole string, as Stripe's), standard base64 for Standard Webhooks (the key is the decoded bytes).
 */
export function newSigningSecret(scheme: SignatureScheme = 'linkplane'): string {
  return scheme === 'standard' ? newStandardSecret() : `whsec_${randomBytes(32).toString('base64url')}`;
}
