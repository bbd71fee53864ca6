// The dashboard's key management (/auth/keys, /auth/scopes): session-only shapes, outside the public OpenAPI
// document like every /auth/* endpoint. A key is never created by a key.
import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Nullable, StringEnum, closed } from '../platform/schema.ts';
import { ContextQuery } from '../users/auth.schemas.ts';
import { ALL_SCOPES } from '../tenancy/scopes.ts';

export const KeyContextQuery = ContextQuery;
/** Without a context, every scope; with one, only those some endpoint open to that kind of key checks. */
export const ScopeListQuery = Type.Partial(ContextQuery);

export const KeyCreateBody = Type.Object(
  {
    context: ContextQuery.properties.context,
    name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'What uses the key, to recognise it in the list' }),
    scopes: Type.Array(StringEnum(ALL_SCOPES), { minItems: 1, maxItems: ALL_SCOPES.length, uniqueItems: true }),
    expires_at: Nullable(DateTime(), { description: 'When the key stops working; null: never' }),
  },
  closed,
);
export type KeyCreateInput = Static<typeof KeyCreateBody>;

export const KeyRecordSchema = Type.Object(
  {
    id: Type.String(),
    name: Nullable(Type.String()),
    prefix: Type.String({ description: 'The first characters of the key, to recognise it' }),
    scopes: Type.Array(Type.String()),
    created_at: DateTime(),
    expires_at: Nullable(DateTime()),
    revoked_at: Nullable(DateTime()),
    last_used_at: Nullable(DateTime()),
  },
  closed,
);
export type KeyRecord = Static<typeof KeyRecordSchema>;

export const KeyListSchema = Type.Object({ data: Type.Array(KeyRecordSchema) }, closed);
export const CreatedKeySchema = Type.Object({ key: Type.String({ description: 'The whole key: shown this once, never stored' }), record: KeyRecordSchema }, closed);
export const ScopeListSchema = Type.Object({ data: Type.Array(Type.Object({ scope: StringEnum(ALL_SCOPES), description: Type.String() }, closed)) }, closed);
