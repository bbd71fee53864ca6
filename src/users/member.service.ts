import { newId } from '../platform/ids.ts';
import { ConflictError, ForbiddenError, NotFoundError, UnauthorizedError } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';
import type { Mailer } from '../webhooks/mailer.ts';
import type { WorkspaceStore } from '../tenancy/workspace.store.ts';
import type { PartnerStore } from '../tenancy/partner.store.ts';
import { normalizeEmail, type UserStore } from '../tenancy/user.store.ts';
import type { MembershipDoc, MembershipKind, MembershipStore, Role } from '../tenancy/membership.store.ts';
import type { InviteDoc, InviteStore } from './invite.store.ts';
import { createUser } from './accounts.ts';
import { hashToken, newToken, type AuthService, type ClientMeta, type SessionView } from './auth.service.ts';
import type { SignedIn } from '../tenancy/principal.ts';

export interface MemberServiceDeps {
  users: UserStore;
  memberships: MembershipStore;
  invites: InviteStore;
  workspaces: WorkspaceStore;
  partners: PartnerStore;
  auth: AuthService;
  mailer: Mailer;
  logger: Logger;
  inviteTtlMs: number;
  publicApiUrl: string;
  now?: () => number;
}

/** The invited address already has an account: it signs in (password here, or first, then follows the link). */
export class AccountExistsError extends UnauthorizedError {
  constructor() {
    super('This address already has an account: give its password, or sign in and open the invitation link again.');
  }
}

export interface CreatedInvite {
  id: string;
  email: string;
  role: Role;
  expires_at: string;
  /** Whether the invitation went out by e-mail; when not (no SMTP_URL), `url` is for the owner to pass on. */
  sent: boolean;
  url?: string;
}

/** Who belongs to a workspace or partner, and how owners bring people in (invites by e-mail) and out. */
export class MemberService {
  private readonly d: MemberServiceDeps;
  private readonly now: () => number;

  constructor(deps: MemberServiceDeps) {
    this.d = deps;
    this.now = deps.now ?? Date.now;
  }

  private async membershipIn(signedIn: SignedIn, context: string, role?: Role): Promise<MembershipDoc> {
    const membership = (await this.d.memberships.find(signedIn.user._id, context)) ?? (await this.asPartnerOwner(signedIn, context));
    if (!membership) throw new ForbiddenError('This user does not belong to that workspace or partner.');
    if (role === 'owner' && membership.role !== 'owner') throw new ForbiddenError('Only owners manage members and invitations.');
    return membership;
  }

  /**
   * An owner of a partner manages the members of its client workspaces as their owner would (a new client has no
   * member until the partner invites one): the membership it acts with, not stored; null for anyone else.
   */
  private async asPartnerOwner(signedIn: SignedIn, context: string): Promise<MembershipDoc | null> {
    if (!context.startsWith('ws_')) return null;
    const workspace = await this.d.workspaces.findById(context);
    if (!workspace?.partner_id) return null;
    const partnerRole = await this.d.memberships.find(signedIn.user._id, workspace.partner_id);
    if (partnerRole?.role !== 'owner') return null;
    return { _id: partnerRole._id, user_id: signedIn.user._id, kind: 'workspace', target_id: context, role: 'owner', created_at: partnerRole.created_at };
  }

  /**
   * A partner owner joins one of its client workspaces as an owner, to open it in the dashboard; already a member,
   * nothing changes. Anyone else: 403.
   */
  async joinClient(signedIn: SignedIn, context: string): Promise<{ context: string; role: Role }> {
    const existing = await this.d.memberships.find(signedIn.user._id, context);
    if (existing) return { context, role: existing.role };
    if (!(await this.asPartnerOwner(signedIn, context))) throw new ForbiddenError('Only an owner of the partner managing this workspace may join it.');
    await this.d.memberships.join({ _id: newId('mbr'), user_id: signedIn.user._id, kind: 'workspace', target_id: context, role: 'owner', created_at: new Date(this.now()) });
    return { context, role: 'owner' };
  }

  async list(signedIn: SignedIn, context: string) {
    await this.membershipIn(signedIn, context);
    const [members, invites] = await Promise.all([this.d.memberships.listForTarget(context), this.d.invites.listOpen(context, new Date(this.now()))]);
    const users = new Map((await this.d.users.findByIds(members.map((m) => m.user_id))).map((u) => [u._id, u]));
    return {
      data: members
        .filter((m) => users.has(m.user_id))
        .map((m) => {
          const user = users.get(m.user_id)!;
          return { user_id: m.user_id, email: user.email, name: user.name, role: m.role, joined_at: m.created_at.toISOString() };
        }),
      invites: invites.map((i) => ({ id: i._id, email: i.email, role: i.role, expires_at: i.expires_at.toISOString() })),
    };
  }

  async invite(signedIn: SignedIn, context: string, email: string, role: Role): Promise<CreatedInvite> {
    const membership = await this.membershipIn(signedIn, context, 'owner');
    const address = normalizeEmail(email);
    const existing = await this.d.users.findByEmail(address);
    if (existing && (await this.d.memberships.find(existing._id, context))) throw new ConflictError(`${address} already belongs here.`);
    const token = newToken();
    const at = this.now();
    const invite: InviteDoc = {
      _id: newId('inv'),
      token_hash: hashToken(token),
      kind: membership.kind,
      target_id: context,
      email: address,
      role,
      invited_by: signedIn.user._id,
      created_at: new Date(at),
      expires_at: new Date(at + this.d.inviteTtlMs),
      accepted_at: null,
      accepted_by: null,
    };
    await this.d.invites.insert(invite);
    const url = `${this.d.publicApiUrl}/auth/invites/${token}`;
    const sent = await this.mail(invite, url, signedIn);
    return { id: invite._id, email: address, role, expires_at: invite.expires_at.toISOString(), sent, ...(sent ? {} : { url }) };
  }

  private async mail(invite: InviteDoc, url: string, signedIn: SignedIn): Promise<boolean> {
    if (!this.d.mailer.configured) return false;
    const name = await this.targetName(invite.kind, invite.target_id);
    const days = Math.round(this.d.inviteTtlMs / 86_400_000);
    const text = [
      `${signedIn.user.name} (${signedIn.user.email}) invites you to the ${invite.kind} "${name}" on Linkplane, as ${invite.role === 'owner' ? 'an owner' : 'a member'}.`,
      '',
      `Accept: ${url}`,
      '',
      `The invitation works once${days >= 1 ? `, for ${days} days` : ''}. If you did not expect it, ignore this e-mail.`,
      '',
      '-- Linkplane',
    ].join('\n');
    try {
      await this.d.mailer.send(invite.email, `Invitation to ${name} on Linkplane`, text);
      return true;
    } catch (error) {
      this.d.logger.error({ err: error, invite_id: invite._id }, 'invitation e-mail could not be sent');
      return false;
    }
  }

  private async targetName(kind: MembershipKind, id: string): Promise<string> {
    const target = kind === 'workspace' ? await this.d.workspaces.findById(id) : await this.d.partners.findById(id);
    return target?.name ?? id;
  }

  async revokeInvite(signedIn: SignedIn, id: string): Promise<void> {
    const invite = await this.d.invites.findById(id);
    if (!invite || invite.accepted_at) throw new NotFoundError('invitation');
    await this.membershipIn(signedIn, invite.target_id, 'owner');
    if (!(await this.d.invites.remove(invite.target_id, id))) throw new NotFoundError('invitation');
  }

  async remove(signedIn: SignedIn, context: string, userId: string): Promise<void> {
    await this.membershipIn(signedIn, context, 'owner');
    const outcome = await this.d.memberships.removeKeepingAnOwner(userId, context);
    if (outcome === 'missing') throw new NotFoundError('member');
    if (outcome === 'last_owner') throw new ConflictError('The last owner cannot be removed: make someone else an owner first.');
    // The removed member's open dashboard sessions must lose this workspace or partner now, on every replica.
    await this.d.auth.sessionsChanged(userId);
  }

  /** The open invitation a token names, or null (unknown, used, expired). */
  findOpen(token: string): Promise<InviteDoc | null> {
    return this.d.invites.findOpenByHash(hashToken(token), new Date(this.now()));
  }

  /** The open invitation a token names when it is to the signed-in user's own address; null otherwise. */
  async findOwn(signedIn: SignedIn, token: string): Promise<InviteDoc | null> {
    const invite = await this.findOpen(token);
    return invite && invite.email === signedIn.user.email ? invite : null;
  }

  /** The signed-in user joins through their own invitation (the accept page's button); null when it was used meanwhile. */
  async acceptOwn(signedIn: SignedIn, invite: InviteDoc): Promise<SessionView | null> {
    if (invite.email !== signedIn.user.email || !(await this.join(invite, signedIn.user._id))) return null;
    return this.d.auth.view(signedIn);
  }

  /**
   * Accepts from the accept page. An address without an account gets one (with the name and password given, if
   * any): the token came to that address. An existing account must prove itself with its password, under the
   * sign-in attempt limits (or its owner signs in first and follows the link again): the link may have been handed
   * to the inviting owner (no SMTP), who must not gain someone's account with it. Null when the token is not open.
   */
  async accept(token: string, input: { name?: string; password?: string }, meta: ClientMeta): Promise<{ token: string; view: SessionView } | null> {
    const invite = await this.findOpen(token);
    if (!invite) return null;
    const existing = await this.d.users.findByEmail(invite.email);
    let user;
    if (existing) {
      if (input.password === undefined) throw new AccountExistsError();
      user = await this.d.auth.checkPassword(invite.email, input.password, meta);
    } else {
      user = await createUser(this.d.users, { email: invite.email, name: input.name ?? null, password: input.password ?? null });
    }
    if (!(await this.join(invite, user._id))) return null;
    return this.d.auth.startSession(user, meta);
  }

  /** An identity provider vouched for the address: its open invitations are accepted (the first-time OIDC user). */
  async acceptAllFor(email: string, userId: string): Promise<number> {
    let joined = 0;
    for (const invite of await this.d.invites.listOpenForEmail(normalizeEmail(email), new Date(this.now()))) {
      if (await this.join(invite, userId)) joined += 1;
    }
    return joined;
  }

  async hasOpenInvite(email: string): Promise<boolean> {
    return (await this.d.invites.listOpenForEmail(normalizeEmail(email), new Date(this.now()))).length > 0;
  }

  private async join(invite: InviteDoc, userId: string): Promise<boolean> {
    const at = new Date(this.now());
    if (!(await this.d.invites.accept(invite._id, userId, at))) return false;
    await this.d.memberships.join({ _id: newId('mbr'), user_id: userId, kind: invite.kind, target_id: invite.target_id, role: invite.role, created_at: at });
    return true;
  }
}
