import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../platform/schema.ts';

// The /auth/* shapes: validated like /v1 bodies. The dashboard's own API, outside the public OpenAPI document but for
// the password reset routes, which it describes (a front end of its own may offer the reset).

const Email = Type.String({ format: 'email', maxLength: 254 });
/** Long enough for any passphrase, short enough that hashing it costs nothing extra. */
const Password = Type.String({ minLength: 1, maxLength: 1024 });
/** A workspace (`ws_…`) or partner (`ptr_…`) id. */
const ContextId = Type.String({ pattern: '^(ws|ptr)_[A-Za-z0-9]{1,64}$' });
const Role = StringEnum(['owner', 'member'] as const);

export const SignInBody = Type.Object({ email: Email, password: Password }, { additionalProperties: false });
export const SignInLinkBody = Type.Object({ email: Email }, { additionalProperties: false });
/** The token of an e-mailed sign-in link, as the link page posts it (43 characters today; some room to change). */
export const SignInLinkTokenBody = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });
export const PasswordResetRequestBody = Type.Object({ email: Email }, { additionalProperties: false });
export const PasswordResetBody = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }), new_password: Password }, { additionalProperties: false });
export const PasswordChangeBody = Type.Object({ current_password: Password, new_password: Password }, { additionalProperties: false });
export const ContextQuery = Type.Object({ context: ContextId }, { additionalProperties: false });
export const ContextBody = Type.Object({ context: ContextId }, { additionalProperties: false });
export const JoinedSchema = Type.Object({ context: Type.String(), role: Role }, { additionalProperties: false });
export const MemberQuery = Type.Object({ context: ContextId, user_id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });
export const InviteBody = Type.Object({ context: ContextId, email: Email, role: Role }, { additionalProperties: false });
export const AcceptInviteBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 200 }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    password: Type.Optional(Password),
  },
  { additionalProperties: false },
);

export const AuthConfigSchema = Type.Object(
  {
    password: Type.Boolean({ description: 'Sign-in with e-mail and password (always offered)' }),
    link: Type.Boolean({ description: 'E-mailed one-time sign-in links (needs SMTP)' }),
    password_reset: Type.Boolean({ description: 'Password reset by an e-mailed link (needs SMTP)' }),
    oidc: Type.Boolean({ description: 'Single sign-on through the configured OpenID Connect provider' }),
    oidc_name: Type.Union([Type.String(), Type.Null()], { description: 'The provider name to show; null without OIDC' }),
    signed_in: Type.Boolean({ description: 'Whether the request carried a live session cookie' }),
  },
  { additionalProperties: false, $id: 'AuthConfig' },
);

export const SessionSchema = Type.Object({
  user: Type.Object({ id: Type.String(), email: Type.String(), name: Type.String() }),
  memberships: Type.Array(Type.Object({ kind: StringEnum(['workspace', 'partner'] as const), id: Type.String(), name: Type.String(), role: Role })),
  csrf_token: Type.String(),
});

export type SignInInput = Static<typeof SignInBody>;
