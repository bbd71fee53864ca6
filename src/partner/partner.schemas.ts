import { Type, type Static } from '@sinclair/typebox';
import { PLAN_IDS } from '../workspace/plans.ts';
import { DisplayName, PaginationSchema } from '../platform/schema.ts';

export const ClientCreateSchema = Type.Object(
  {
    name: DisplayName(120),
    plan: Type.Optional(Type.Union(PLAN_IDS.map((id) => Type.Literal(id)), { default: 'free' })),
  },
  { additionalProperties: false, $id: 'ClientCreate' },
);
export type ClientCreate = Static<typeof ClientCreateSchema>;

export const ClientSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    plan: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false, $id: 'Client' },
);
export type Client = Static<typeof ClientSchema>;

export const ClientListQuerySchema = Type.Object(
  {
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  },
  { additionalProperties: false },
);

export const ClientListSchema = Type.Object(
  { data: Type.Array(ClientSchema), pagination: PaginationSchema },
  { additionalProperties: false, $id: 'ClientList' },
);
