import { createHash, randomBytes } from 'node:crypto';
import { newId } from '../platform/ids.ts';
import {
  ForbiddenError,
  NoSessionError,
  NotConfiguredError,
  NotFoundError,
  PasswordResetRateLimitedError,
  SignInFailedError,
  SignInRateLimitedError,
  ValidationError,
} from '../platform/errors.ts';
import { hashPassword, verifyPassword } from '../platform/password.ts';
import type { Logger } from '../platform/logger.ts';
import type { CacheBus } from '../platform/cache-bus.ts';
import type { PasswordAttempts } from '../platform/password-attempts.ts';
import type { Mailer } from '../webhooks/mailer.ts';
import type { Principal, SignedIn } from '../tenancy/principal.ts';
import type { ApiKeyDoc } from '../tenancy/key.store.ts';
import type { WorkspaceDoc, WorkspaceStore } from '../tenancy/workspace.store.ts';
import type { PartnerDoc, PartnerStore } from '../tenancy/partner.store.ts';
import { effectivePlan } from '../tenancy/plans.ts';
import { normalizeEmail, type UserDoc, type UserStore } from '../tenancy/user.store.ts';
import { checkPasswordStrength } from './accounts.ts';
import type { SessionDoc, SessionStore } from '../tenancy/session.store.ts';
import type { MembershipKind, MembershipStore, Role } from '../tenancy/membership.store.ts';
import type { SignInLinkStore } from './token.store.ts';
import { scopesOf } from '../tenancy/roles.ts';

export interface SessionView {
  user: { id: string; email: string; name: string };
  memberships: Array<{ kind: MembershipKind; id: string; name: string; role: Role }>;
  csrf_token: string;
}

export interface ClientMeta {
  ip: string | null;
  userAgent: string | null;
}

export interface AuthSettings {
  idleTimeoutMs: number;
  absoluteTimeoutMs: number;
  linkTtlMs: number;
  /**
   * Sign-in attempts in the attempt window: per account and client address together, per address, and the
   * per-account ceiling; password reset e-mails per account and per address.
   */
  attempts: {
    perPair: PasswordAttempts;
    perIp: PasswordAttempts;
    perAccount: PasswordAttempts;
    resetsPerAccount: PasswordAttempts;
    resetsPerIp: PasswordAttempts;
  };
  /** How long a password reset link works. */
  passwordResetTtlMs: number;
  passwordResets: SignInLinkStore;
  publicApiUrl: string;
  defaultRateLimits: { workspacePerMinute: number; partnerPerMinute: number };
}

export interface AuthServiceDeps {
  users: UserStore;
  sessions: SessionStore;
  memberships: MembershipStore;
  links: SignInLinkStore;
  workspaces: WorkspaceStore;
  partners: PartnerStore;
  mailer: Mailer;
  logger: Logger;
  settings: AuthSettings;
  /** Tells every replica's session cache that a user's sessions changed; null where nothing caches them (the CLI). */
  bus: CacheBus | null;
  now?: () => number;
}

/** Reset e-mails are counted per account and per address in windows of an hour. */
export const PASSWORD_RESET_WINDOW_MS = 3_600_000;

/** last_seen_at is for the session list: one write per session per minute is enough. */
const TOUCH_INTERVAL_MS = 60_000;

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** 32 random bytes, URL-safe: the cookie value, sign-in link and invite tokens. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Accounts, password and link sign-in, sessions, and the /v1 principal a session acts as. */
export class AuthService {
  private readonly d: AuthServiceDeps;
  private readonly now: () => number;
  /** Verified against when the user is unknown, so the answer takes as long as for a wrong password. */
  private dummyHash: Promise<string> | null = null;

  constructor(deps: AuthServiceDeps) {
    this.d = deps;
    this.now = deps.now ?? Date.now;
  }

  async signInWithPassword(email: string, password: string, meta: ClientMeta): Promise<{ token: string; view: SessionView }> {
    return this.startSession(await this.checkPassword(email, password, meta), meta);
  }

  /** The account whose password this is, within the attempt limits; SignInFailedError (401) or 429 otherwise. */
  async checkPassword(email: string, password: string, meta: ClientMeta): Promise<UserDoc> {
    const account = normalizeEmail(email);
    let user: UserDoc | null = null;
    const ok = await this.guess(account, meta, async () => {
      user = await this.d.users.findByEmail(account);
      return user?.password_hash ? verifyPassword(password, user.password_hash) : this.burnTime(password);
    });
    if (!user || !ok) throw new SignInFailedError();
    return user;
  }

  /**
   * One guess of an account's password, wherever it is made (sign-in, or the current password of a change). Before
   * the password is checked it takes an attempt of three windows, so concurrent guesses each use one up:
   * - the account from this address (SIGN_IN_MAX_ATTEMPTS): someone guessing elsewhere does not lock the owner out;
   * - the address across accounts (SIGN_IN_MAX_ATTEMPTS_PER_IP): one address cannot go down a list of accounts;
   * - the account from every address (SIGN_IN_MAX_ATTEMPTS_PER_ACCOUNT, much higher): a ceiling on distributed
   *   guessing. It is taken only when the first two allow the guess, so an address already refused cannot spend
   *   the account's ceiling and lock its owner out from everywhere.
   * Past any limit it is SignInRateLimitedError (429, Retry-After, the time it lifts) and the password is unchecked.
   * The owner's success clears the pair's count; the address's is not cleared, or one known password would reset it,
   * nor the ceiling, which only distributed failures fill.
   */
  private async guess(account: string, meta: ClientMeta, check: () => Promise<boolean>): Promise<boolean> {
    const { perPair, perIp, perAccount } = this.d.settings.attempts;
    const address = meta.ip ?? 'unknown';
    const pair = `${account}\n${address}`;
    const now = this.now();
    const [byPair, byIp] = await Promise.all([perPair.reserve('sign-in-pair', pair, now), perIp.reserve('sign-in-ip', address, now)]);
    if (byPair > 0 || byIp > 0) {
      throw new SignInRateLimitedError(Math.max(byPair, byIp), byPair >= byIp ? 'for this account from this address' : 'from this address', now);
    }
    const byAccount = await perAccount.reserve('sign-in-account', account, now);
    if (byAccount > 0) throw new SignInRateLimitedError(byAccount, 'for this account', now);
    const ok = await check();
    if (ok) await perPair.succeed('sign-in-pair', pair);
    return ok;
  }

  private async burnTime(password: string): Promise<false> {
    this.dummyHash ??= hashPassword(newToken());
    await verifyPassword(password, await this.dummyHash);
    return false;
  }

  async startSession(user: UserDoc, meta: ClientMeta): Promise<{ token: string; view: SessionView }> {
    const token = newToken();
    const at = this.now();
    const session: SessionDoc = {
      _id: newId('ses'),
      token_hash: hashToken(token),
      user_id: user._id,
      csrf_token: newToken(),
      created_at: new Date(at),
      last_seen_at: new Date(at),
      idle_expires_at: new Date(at + this.d.settings.idleTimeoutMs),
      expires_at: new Date(at + this.d.settings.absoluteTimeoutMs),
      revoked_at: null,
      user_agent: meta.userAgent?.slice(0, 300) ?? null,
      ip: meta.ip,
    };
    await this.d.sessions.insert(session);
    return { token, view: await this.view({ session, user }) };
  }

  /** The session a cookie token names, if still usable (not revoked, not idle too long, not past its lifetime). */
  async session(token: string | undefined): Promise<SessionDoc | null> {
    if (!token) return null;
    const session = await this.d.sessions.findByHash(hashToken(token));
    const nowMs = this.now();
    if (!session || session.revoked_at || session.expires_at.getTime() <= nowMs || session.idle_expires_at.getTime() <= nowMs) return null;
    if (nowMs - session.last_seen_at.getTime() >= TOUCH_INTERVAL_MS) {
      const idle = new Date(Math.min(nowMs + this.d.settings.idleTimeoutMs, session.expires_at.getTime()));
      this.d.sessions.touch(session._id, new Date(nowMs), idle).catch((error: unknown) => {
        this.d.logger.warn({ err: error, session_id: session._id }, 'could not record session use');
      });
    }
    return session;
  }

  /** The session and its user, for the /auth endpoints. */
  async authenticate(token: string | undefined): Promise<SignedIn | null> {
    const session = await this.session(token);
    if (!session) return null;
    const user = await this.d.users.findById(session.user_id);
    return user ? { session, user } : null;
  }

  async view(signedIn: SignedIn): Promise<SessionView> {
    const memberships = await this.d.memberships.listForUser(signedIn.user._id);
    const wsIds = memberships.filter((m) => m.kind === 'workspace').map((m) => m.target_id);
    const ptrIds = memberships.filter((m) => m.kind === 'partner').map((m) => m.target_id);
    const [workspaces, partners] = await Promise.all([
      wsIds.length ? this.d.workspaces.collection.find({ _id: { $in: wsIds } }, { projection: { name: 1 } }).toArray() : [],
      ptrIds.length ? this.d.partners.collection.find({ _id: { $in: ptrIds } }, { projection: { name: 1 } }).toArray() : [],
    ]);
    const names = new Map<string, string>([...workspaces, ...partners].map((t) => [t._id, t.name]));
    return {
      user: { id: signedIn.user._id, email: signedIn.user.email, name: signedIn.user.name },
      memberships: memberships
        .filter((m) => names.has(m.target_id))
        .map((m) => ({ kind: m.kind, id: m.target_id, name: names.get(m.target_id)!, role: m.role })),
      csrf_token: signedIn.session.csrf_token,
    };
  }

  async signOut(signedIn: SignedIn): Promise<void> {
    await this.d.sessions.revoke(signedIn.user._id, signedIn.session._id, new Date(this.now()));
    await this.sessionsChanged(signedIn.user._id);
  }

  async listSessions(signedIn: SignedIn) {
    const sessions = await this.d.sessions.listLive(signedIn.user._id, new Date(this.now()));
    return sessions.map((s) => ({
      id: s._id,
      created_at: s.created_at.toISOString(),
      last_seen_at: s.last_seen_at.toISOString(),
      user_agent: s.user_agent,
      ip: s.ip,
      current: s._id === signedIn.session._id,
    }));
  }

  async revokeSession(signedIn: SignedIn, id: string): Promise<void> {
    if (!(await this.d.sessions.revoke(signedIn.user._id, id, new Date(this.now())))) throw new NotFoundError('session');
    await this.sessionsChanged(signedIn.user._id);
  }

  /** Every replica drops what it cached of the user's sessions: one that ended must stop working at once. */
  async sessionsChanged(userId: string): Promise<void> {
    await this.d.bus?.publish({ kind: 'user', id: userId });
  }

  /** Sets a new password and signs out every other session of the user (whoever else had it is out). */
  async changePassword(signedIn: SignedIn, current: string, next: string, meta: ClientMeta): Promise<void> {
    const { user } = signedIn;
    // A guess of the current password like a sign-in attempt: a stolen session must not try passwords without limit.
    const ok = await this.guess(normalizeEmail(user.email), meta, async () => (user.password_hash ? verifyPassword(current, user.password_hash) : false));
    if (!ok) throw new ValidationError([{ path: 'current_password', message: 'is not correct' }]);
    checkPasswordStrength(next, 'new_password');
    const at = new Date(this.now());
    await this.d.users.setPassword(user._id, await hashPassword(next), at);
    await this.d.sessions.revokeOthers(user._id, signedIn.session._id, at);
    await this.sessionsChanged(user._id);
  }

  get linkSignInAvailable(): boolean {
    return this.d.mailer.configured;
  }

  /**
   * E-mails a one-time sign-in link when the address has an account; silent otherwise. The mail goes out after the
   * answer, so neither the answer nor its timing tells whether an account exists; a mail failure is logged.
   */
  async requestSignInLink(email: string): Promise<void> {
    if (!this.d.mailer.configured) throw new NotConfiguredError('Sign-in by e-mail link (SMTP_URL)');
    const user = await this.d.users.findByEmail(email);
    if (!user) return;
    const token = newToken();
    const at = this.now();
    await this.d.links.insert({ _id: hashToken(token), user_id: user._id, created_at: new Date(at), expires_at: new Date(at + this.d.settings.linkTtlMs), used_at: null });
    const url = `${this.d.settings.publicApiUrl}/auth/sign-in/link/${token}`;
    const minutes = Math.round(this.d.settings.linkTtlMs / 60_000);
    const text = [
      `Sign in to Linkplane as ${user.email}:`,
      '',
      `  ${url}`,
      '',
      `The link works once, for ${minutes} minutes. If you did not ask for it, ignore this e-mail.`,
      '',
      '-- Linkplane',
    ].join('\n');
    this.d.mailer.send(user.email, 'Your Linkplane sign-in link', text).catch((error: unknown) => {
      this.d.logger.error({ err: error, user_id: user._id }, 'sign-in link e-mail could not be sent');
    });
  }

  get passwordResetAvailable(): boolean {
    return this.d.mailer.configured;
  }

  /**
   * E-mails a one-time password reset link when the address has an account. The answer is the same whether or not
   * it has one, and the mail goes out after the answer, so neither the answer nor its timing tells. Limits: reset
   * e-mails per client address (past it, 429 with Retry-After, whatever the account) and per account (past it no
   * more mail is sent that hour, silently: the answer must not differ for an account that exists).
   */
  async requestPasswordReset(email: string, meta: ClientMeta): Promise<void> {
    if (!this.d.mailer.configured) throw new NotConfiguredError('Password reset by e-mail (SMTP_URL)');
    const account = normalizeEmail(email);
    const now = this.now();
    const { resetsPerIp, resetsPerAccount } = this.d.settings.attempts;
    const byIp = await resetsPerIp.reserve('reset-ip', meta.ip ?? 'unknown', now);
    if (byIp > 0) throw new PasswordResetRateLimitedError(byIp, now);
    if ((await resetsPerAccount.reserve('reset-account', account, now)) > 0) return;
    this.sendPasswordReset(account, now).catch((error: unknown) => {
      this.d.logger.error({ err: error }, 'password reset could not be prepared');
    });
  }

  /** After the answer: the account's lookup, its link and the e-mail take time only when it exists. */
  private async sendPasswordReset(account: string, now: number): Promise<void> {
    const user = await this.d.users.findByEmail(account);
    if (!user) return;
    const token = newToken();
    const ttl = this.d.settings.passwordResetTtlMs;
    await this.d.settings.passwordResets.insert({ _id: hashToken(token), user_id: user._id, created_at: new Date(now), expires_at: new Date(now + ttl), used_at: null });
    const url = `${this.d.settings.publicApiUrl}/auth/password/reset/${token}`;
    const text = [
      `Someone, hopefully you, asked to reset the Linkplane password of ${user.email}. Choose a new one here:`,
      '',
      `  ${url}`,
      '',
      `The link works once, for ${Math.round(ttl / 60_000)} minutes. Setting a new password signs you out everywhere else.`,
      'If you did not ask for it, ignore this e-mail: your password stays as it is.',
      '',
      '-- Linkplane',
    ].join('\n');
    try {
      await this.d.mailer.send(user.email, 'Reset your Linkplane password', text);
    } catch (error) {
      this.d.logger.error({ err: error, user_id: user._id }, 'password reset e-mail could not be sent');
    }
  }

  /** The address an open reset link is for, using nothing (mail scanners open links too); null when unusable. */
  async passwordResetEmail(token: string): Promise<string | null> {
    const link = await this.d.settings.passwordResets.findOpen(hashToken(token), new Date(this.now()));
    if (!link) return null;
    return (await this.d.users.findById(link.user_id))?.email ?? null;
  }

  /**
   * Uses a reset link once: sets the new password, closes the user's other reset links, ends every session of the
   * user, and starts one for the person who reset it. A weak password is refused before the link is used, so it
   * can be tried again; null when the link is unknown, used or expired.
   */
  async resetPassword(token: string, password: string, meta: ClientMeta): Promise<{ token: string; view: SessionView } | null> {
    checkPasswordStrength(password, 'new_password');
    const hash = await hashPassword(password);
    const at = new Date(this.now());
    const link = await this.d.settings.passwordResets.consume(hashToken(token), at);
    if (!link) return null;
    const user = await this.d.users.findById(link.user_id);
    if (!user) return null;
    await this.d.users.setPassword(user._id, hash, at);
    await Promise.all([this.d.settings.passwordResets.closeAllOf(user._id, at), this.d.sessions.revokeOthers(user._id, null, at)]);
    await this.sessionsChanged(user._id);
    return this.startSession({ ...user, password_hash: hash }, meta);
  }

  /**
   * The address an open sign-in link signs in as, using nothing: mail scanners open links before the person does,
   * so following the link only leads to a page whose button uses it. Null when it is unknown, used or expired.
   */
  async signInLinkEmail(token: string): Promise<string | null> {
    const link = await this.d.links.findOpen(hashToken(token), new Date(this.now()));
    if (!link) return null;
    return (await this.d.users.findById(link.user_id))?.email ?? null;
  }

  /** Uses a sign-in link once; null when it is unknown, used or expired. */
  async signInWithLink(token: string, meta: ClientMeta): Promise<{ token: string; view: SessionView } | null> {
    const link = await this.d.links.consume(hashToken(token), new Date(this.now()));
    if (!link) return null;
    const user = await this.d.users.findById(link.user_id);
    return user ? this.startSession(user, meta) : null;
  }

  /**
   * The /v1 principal of a session acting in the workspace or partner `context`, as a key of the same kind would
   * give it; the synthetic key record carries the session id (the rate-limit bucket) and is never stored or listed.
   */
  async principalFor(session: SessionDoc, context: string): Promise<Principal> {
    // The membership and its workspace or partner in one round trip: this runs on every dashboard call to /v1.
    const isWorkspace = context.startsWith('ws_');
    const [membership, target] = await Promise.all([
      this.d.memberships.find(session.user_id, context),
      isWorkspace ? this.d.workspaces.findById(context) : this.d.partners.findById(context),
    ]);
    if (!membership || !target || membership.kind !== (isWorkspace ? 'workspace' : 'partner')) {
      throw new ForbiddenError('Linkplane-Context names no workspace or partner this user belongs to.');
    }
    const scopes = scopesOf(membership.role);
    const key: ApiKeyDoc = {
      _id: session._id,
      kind: membership.kind,
      workspace_id: membership.kind === 'workspace' ? context : null,
      partner_id: membership.kind === 'partner' ? context : null,
      name: 'dashboard session',
      prefix: '',
      key_hash: '',
      scopes: [...scopes],
      created_at: session.created_at,
      expires_at: session.expires_at,
      revoked_at: null,
      last_used_at: null,
    };
    const limits = this.d.settings.defaultRateLimits;
    if (isWorkspace) {
      const workspace = target as WorkspaceDoc;
      const plan = effectivePlan(workspace.plan_id, workspace.limits_override, workspace.capabilities_override);
      return { kind: 'workspace', key, scopes, workspace, plan, rateLimitPerMinute: plan.limits.rate_limit_per_minute ?? limits.workspacePerMinute };
    }
    const partner = target as PartnerDoc;
    return { kind: 'partner', key, scopes, partner, rateLimitPerMinute: partner.rate_limit_per_minute ?? limits.partnerPerMinute };
  }

  /** Signs in a user whose address an identity provider vouched for; null when no account has it. */
  async signInVerifiedEmail(email: string, meta: ClientMeta): Promise<{ token: string; view: SessionView } | null> {
    const user = await this.d.users.findByEmail(email);
    return user ? this.startSession(user, meta) : null;
  }

  requireSignedIn(signedIn: SignedIn | undefined): SignedIn {
    if (!signedIn) throw new NoSessionError();
    return signedIn;
  }
}
