import * as client from 'openid-client';
import { UpstreamError } from '../platform/errors.ts';
import { seal, unseal } from '../platform/sealed.ts';

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string | null;
  /** `<public API URL>/auth/oidc/callback`, registered at the identity provider. */
  redirectUri: string;
  /** Signs the short-lived cookie that carries state, nonce and PKCE verifier to the callback. */
  secretKey: string;
}

/** What the callback needs to check the provider's answer: kept in a signed cookie, never in the URL. */
export interface PendingSignIn {
  state: string;
  nonce: string;
  verifier: string;
  /** Unix ms after which the attempt is void. */
  expires: number;
}

export interface VerifiedIdentity {
  email: string;
  name: string | null;
}

/** The attempt failed at the provider or in its checks (state, nonce, PKCE, signature, unverified e-mail). */
export class OidcFailure extends Error {}

const PENDING_TTL_MS = 10 * 60_000;
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * OpenID Connect sign-in through openid-client: authorization code with PKCE, state and nonce. The provider is
 * discovered on first use (and again after a failure, so a provider down at start-up is picked up when back).
 */
export class OidcClient {
  private readonly settings: OidcSettings;
  private config: Promise<client.Configuration> | null = null;

  constructor(settings: OidcSettings) {
    this.settings = settings;
  }

  private configuration(): Promise<client.Configuration> {
    if (!this.config) {
      const { issuer, clientId, clientSecret } = this.settings;
      const url = new URL(issuer);
      // Plain http only for a provider on this machine (development and tests); anywhere else it must be https.
      const execute = url.protocol === 'http:' && LOOPBACK.has(url.hostname) ? [client.allowInsecureRequests] : [];
      // HTTP Basic for a confidential client: the one method RFC 6749 requires every provider to support.
      const auth = clientSecret ? client.ClientSecretBasic(clientSecret) : client.None();
      this.config = client.discovery(url, clientId, undefined, auth, { execute, timeout: 10 }).catch((error: unknown) => {
        this.config = null;
        throw new UpstreamError('oidc', 'The identity provider could not be reached.', error);
      });
    }
    return this.config;
  }

  /** The provider's authorization URL, and the pending attempt to keep for the callback. */
  async start(now: number): Promise<{ url: string; pending: PendingSignIn }> {
    const config = await this.configuration();
    const pending: PendingSignIn = { state: client.randomState(), nonce: client.randomNonce(), verifier: client.randomPKCECodeVerifier(), expires: now + PENDING_TTL_MS };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.settings.redirectUri,
      scope: 'openid email profile',
      code_challenge: await client.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
    });
    return { url: url.href, pending };
  }

  /** Exchanges the code for tokens and answers the verified e-mail; throws OidcFailure on any failed check. */
  async finish(callbackUrl: URL, pending: PendingSignIn, now: number): Promise<VerifiedIdentity> {
    if (pending.expires <= now) throw new OidcFailure('the sign-in attempt expired');
    const config = await this.configuration();
    let claims: Record<string, unknown>;
    try {
      const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: pending.verifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      const idClaims = tokens.claims();
      if (!idClaims) throw new OidcFailure('no ID token');
      claims = { ...idClaims };
      // Providers often keep e-mail out of the ID token of a code flow: the userinfo endpoint has it.
      if (typeof claims.email !== 'string') claims = { ...claims, ...(await client.fetchUserInfo(config, tokens.access_token, idClaims.sub)) };
    } catch (error) {
      if (error instanceof OidcFailure) throw error;
      throw new OidcFailure((error as Error).message);
    }
    if (typeof claims.email !== 'string' || claims.email_verified !== true) throw new OidcFailure('the provider did not vouch for an e-mail address');
    return { email: claims.email, name: typeof claims.name === 'string' ? claims.name : null };
  }

  seal(pending: PendingSignIn): string {
    return seal(this.settings.secretKey, 'oidc', pending);
  }

  unseal(value: string | undefined): PendingSignIn | null {
    const parsed = unseal(this.settings.secretKey, 'oidc', value) as Partial<PendingSignIn> | null;
    if (typeof parsed !== 'object' || parsed === null) return null;
    return typeof parsed.state === 'string' && typeof parsed.nonce === 'string' && typeof parsed.verifier === 'string' && typeof parsed.expires === 'number' ? (parsed as PendingSignIn) : null;
  }
}
