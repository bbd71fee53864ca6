import { Type, type Static } from '@sinclair/typebox';
import { CAPABILITIES } from './plans.ts';

const Count = Type.Integer({ minimum: 0 });

export const PlanLimitsSchema = Type.Object(
  {
    links: Count,
    domains: Count,
    tracked_clicks_per_month: Count,
    rate_limit_per_minute: Type.Integer({ minimum: 1, description: 'Requests per sliding minute for each key' }),
  },
  { additionalProperties: false },
);

export const WorkspaceProfileSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    partner_id: Type.Union([Type.String(), Type.Null()]),
    owner_email: Type.Union([Type.String({ format: 'email' }), Type.Null()], {
      description: "The owner's address for notices (a webhook endpoint turning failing); null when none is on file",
    }),
    created_at: Type.String({ format: 'date-time' }),
    plan: Type.Object(
      {
        id: Type.String(),
        name: Type.String(),
        limits: PlanLimitsSchema,
        capabilities: Type.Array(Type.Union(CAPABILITIES.map((c) => Type.Literal(c)))),
      },
      { additionalProperties: false },
    ),
    usage: Type.Object(
      {
        links: Count,
        domains: Count,
        tracked_clicks: Count,
        period_start: Type.String({ format: 'date-time', description: 'Start of the current monthly period (UTC)' }),
        period_end: Type.String({ format: 'date-time', description: 'End of the current monthly period (UTC)' }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, $id: 'WorkspaceProfile' },
);

export type WorkspaceProfile = Static<typeof WorkspaceProfileSchema>;
