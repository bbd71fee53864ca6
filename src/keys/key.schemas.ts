import { Type, type Static } from '@sinclair/typebox';
import { ALL_SCOPES } from '../tenancy/scopes.ts';

const Timestamp = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

/** An API key as the API shows it: never the secret, never its hash. */
export const KeyInfoSchema = Type.Object(
  {
    id: Type.String(),
    kind: Type.Union([Type.Literal('workspace'), Type.Literal('partner')]),
    name: Type.Union([Type.String(), Type.Null()]),
    prefix: Type.String({ description: 'The first characters of the key, to recognise it' }),
    workspace_id: Type.Union([Type.String(), Type.Null()]),
    partner_id: Type.Union([Type.String(), Type.Null()]),
    scopes: Type.Array(Type.Union(ALL_SCOPES.map((s) => Type.Literal(s)))),
    created_at: Type.String({ format: 'date-time' }),
    expires_at: Timestamp,
    last_used_at: Timestamp,
  },
  { additionalProperties: false, $id: 'KeyInfo' },
);
export type KeyInfo = Static<typeof KeyInfoSchema>;
