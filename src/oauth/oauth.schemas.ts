// The shapes of the authorised apps (/v1/authorized-apps, in the OpenAPI document) and of the consent page's
// calls (/auth/oauth/requests, the dashboard's own API like every /auth/* endpoint).
import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Nullable, StringEnum, closed } from '../platform/schema.ts';
import { ALL_SCOPES } from '../tenancy/scopes.ts';

const ScopeName = StringEnum(ALL_SCOPES);

export const AuthorizedAppSchema = Type.Object(
  {
    id: Type.String({ description: 'The authorisation (`app_…`)' }),
    client_id: Type.String({ description: 'The app’s client id at the authorization server (dynamically registered)' }),
    client_name: Nullable(Type.String(), { description: 'The name the app registered with; shown on the consent page' }),
    authorized_by: Type.String({ description: 'The user who approved it (`usr_…`): the app acts within that person’s role' }),
    scopes: Type.Array(ScopeName, { description: 'The scopes approved: what its tokens may carry, at most' }),
    resource: Type.String({ format: 'uri', description: 'The resource its tokens are bound to (RFC 8707): the tool server `…/v1/mcp`, or the whole API `…/v1`' }),
    created_at: DateTime(),
    last_used_at: Nullable(DateTime()),
    revoked_at: Nullable(DateTime()),
  },
  { ...closed, $id: 'AuthorizedApp' },
);
export type AuthorizedAppView = Static<typeof AuthorizedAppSchema>;
export const AuthorizedAppListSchema = Type.Object({ data: Type.Array(AuthorizedAppSchema) }, closed);

export const ConsentRequestSchema = Type.Object(
  {
    id: Type.String(),
    client: Type.Object({ id: Type.String(), name: Nullable(Type.String()), uri: Nullable(Type.String()), redirect_uri: Type.String() }, closed),
    resource: Type.String(),
    scopes: Type.Array(Type.Object({ scope: ScopeName, description: Type.String() }, closed)),
  },
  closed,
);
export type ConsentRequestView = Static<typeof ConsentRequestSchema>;
export const ConsentApproveBody = Type.Object(
  {
    context: Type.String({ pattern: '^(ws|ptr)_[A-Za-z0-9]{1,64}$', description: 'The workspace (or partner) the app will act in' }),
    scopes: Type.Optional(Type.Array(ScopeName, { minItems: 1, maxItems: ALL_SCOPES.length, uniqueItems: true, description: 'A subset of those asked for; all of them when left out' })),
  },
  closed,
);
export const ConsentAnswerSchema = Type.Object({ redirect_to: Type.String({ description: 'Where the browser goes next: back to the app, through the authorization server' }) }, closed);
