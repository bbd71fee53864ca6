import { hashPassword } from '../platform/password.ts';
import { newId, randomBase62 } from '../platform/ids.ts';
import { NotFoundError, ValidationError } from '../platform/errors.ts';
import { normalizeEmail, type UserDoc, type UserStore } from '../tenancy/user.store.ts';
import type { MembershipKind, MembershipStore, Role } from '../tenancy/membership.store.ts';

export const MIN_PASSWORD_LENGTH = 10;

export function checkPasswordStrength(password: string, path: string): void {
  if ([...password].length < MIN_PASSWORD_LENGTH) {
    throw new ValidationError([{ path, message: `must be at least ${MIN_PASSWORD_LENGTH} characters` }]);
  }
}

/** 20 base62 characters (about 119 bits): printed once by `linkplane user create` and `make run`. */
export function generatePassword(): string {
  return randomBase62(20);
}

/** A new account; a null password makes one that signs in by link, invite or OpenID Connect only. */
export async function createUser(users: UserStore, input: { email: string; name?: string | null; password?: string | null }, now = new Date()): Promise<UserDoc> {
  const email = normalizeEmail(input.email);
  if (input.password) checkPasswordStrength(input.password, 'password');
  const user: UserDoc = {
    _id: newId('usr'),
    email,
    name: input.name?.trim() || email.split('@')[0]!,
    password_hash: input.password ? await hashPassword(input.password) : null,
    created_at: now,
    updated_at: now,
  };
  await users.insert(user);
  return user;
}

/** Gives the user `role` in the workspace or partner (bootstrapping: the CLI and the demo). */
export async function grant(
  memberships: MembershipStore,
  targets: { exists: (kind: MembershipKind, id: string) => Promise<boolean> },
  input: { userId: string; kind: MembershipKind; targetId: string; role: Role },
): Promise<void> {
  if (!(await targets.exists(input.kind, input.targetId))) throw new NotFoundError(input.kind);
  await memberships.upsert({ _id: newId('mbr'), user_id: input.userId, kind: input.kind, target_id: input.targetId, role: input.role, created_at: new Date() });
}
