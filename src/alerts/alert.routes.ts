import { Type } from '@sinclair/typebox';
import { route, type RouteSpec } from '../http/route-table.ts';
import { workspaceOf } from '../http/auth.ts';
import { Integer, Text, closed } from '../platform/schema.ts';
import { MAX_RULES_PER_WORKSPACE, type AlertService } from './alert.service.ts';
import {
  AlertFiringListQuerySchema,
  AlertFiringListSchema,
  AlertFiringSchema,
  AlertRuleCreateSchema,
  AlertRuleListSchema,
  AlertRuleSchema,
  AlertRuleUpdateSchema,
} from './alert.schemas.ts';

const read = { kind: 'workspace', scope: 'alerts:read' } as const;
const write = { kind: 'workspace', scope: 'alerts:write' } as const;
const RuleListQuerySchema = Type.Object({ cursor: Type.Optional(Text(1, 500)), limit: Integer(1, 100, { default: 50 }) }, closed);

export function alertRoutes(alerts: AlertService, evaluationIntervalMs: number): RouteSpec[] {
  const every = evaluationIntervalMs >= 60_000 ? `${Math.round(evaluationIntervalMs / 60_000)} min` : `${evaluationIntervalMs} ms`;
  return [
    route({
      method: 'POST',
      path: '/alerts/rules',
      operationId: 'createAlertRule',
      tag: 'Alerts',
      summary: 'Create an alert rule',
      description:
        `Evaluated every ${every} (ALERT_EVAL_INTERVAL_MS) by the worker. A breached rule opens one firing per incident (state ` +
        '`firing`), kept until the condition clears (`resolved`); a new incident of the same rule waits for `cooldown_minutes` from the ' +
        'previous start. Channels: `emails` get a message when it fires and resolves; `webhook: true` emits `alert.fired` and ' +
        `\`alert.resolved\` (data: the firing) to the workspace's endpoints subscribed to them. Defaults: window 60 min, 7 baseline ` +
        `windows, cooldown 60 min, no channel, enabled. At most ${MAX_RULES_PER_WORKSPACE} rules per workspace.`,
      auth: write,
      body: AlertRuleCreateSchema,
      errors: ['quota_exceeded'],
      responses: [{ status: 201, description: 'The rule', schema: AlertRuleSchema }],
      handler: async (ctx, { body }) => {
        const rule = await alerts.create(workspaceOf(ctx), body);
        ctx.status = 201;
        ctx.set('Location', `/v1/alerts/rules/${rule.id}`);
        ctx.body = rule;
      },
    }),
    route({
      method: 'GET',
      path: '/alerts/rules',
      operationId: 'listAlertRules',
      tag: 'Alerts',
      summary: 'Alert rules, newest first, cursor-paginated',
      auth: read,
      query: RuleListQuerySchema,
      responses: [{ status: 200, description: 'A page of rules', schema: AlertRuleListSchema }],
      handler: async (ctx, { query }) => {
        ctx.body = await alerts.list(workspaceOf(ctx), query);
      },
    }),
    route({
      method: 'GET',
      path: '/alerts/rules/:id',
      operationId: 'getAlertRule',
      tag: 'Alerts',
      summary: 'Read one alert rule',
      auth: read,
      responses: [{ status: 200, description: 'The rule', schema: AlertRuleSchema }],
      handler: async (ctx, { params }) => {
        ctx.body = await alerts.get(workspaceOf(ctx), params.id!);
      },
    }),
    route({
      method: 'PATCH',
      path: '/alerts/rules/:id',
      operationId: 'updateAlertRule',
      tag: 'Alerts',
      summary: 'Update an alert rule (its type is fixed: create another rule for another condition)',
      auth: write,
      body: AlertRuleUpdateSchema,
      responses: [{ status: 200, description: 'The rule', schema: AlertRuleSchema }],
      handler: async (ctx, { params, body }) => {
        ctx.body = await alerts.update(workspaceOf(ctx), params.id!, body);
      },
    }),
    route({
      method: 'DELETE',
      path: '/alerts/rules/:id',
      operationId: 'deleteAlertRule',
      tag: 'Alerts',
      summary: 'Delete an alert rule; its firings stay listed (an open one is resolved)',
      auth: write,
      responses: [{ status: 204, description: 'Deleted' }],
      handler: async (ctx, { params }) => {
        await alerts.delete(workspaceOf(ctx), params.id!);
        ctx.status = 204;
      },
    }),
    route({
      method: 'GET',
      path: '/alerts/firings',
      operationId: 'listAlertFirings',
      tag: 'Alerts',
      summary: 'Alert firings (one per incident), newest first, cursor-paginated; filter by state and rule',
      auth: read,
      query: AlertFiringListQuerySchema,
      responses: [{ status: 200, description: 'A page of firings', schema: AlertFiringListSchema }],
      handler: async (ctx, { query }) => {
        ctx.body = await alerts.firings(workspaceOf(ctx), query);
      },
    }),
    route({
      method: 'GET',
      path: '/alerts/firings/:id',
      operationId: 'getAlertFiring',
      tag: 'Alerts',
      summary: 'Read one firing: the value observed, the threshold, when it started and resolved',
      auth: read,
      responses: [{ status: 200, description: 'The firing', schema: AlertFiringSchema }],
      handler: async (ctx, { params }) => {
        ctx.body = await alerts.firing(workspaceOf(ctx), params.id!);
      },
    }),
    route({
      method: 'POST',
      path: '/alerts/firings/:id/acknowledge',
      operationId: 'acknowledgeAlertFiring',
      tag: 'Alerts',
      summary: 'Acknowledge a firing (someone is on it); its state still follows the condition',
      auth: write,
      responses: [{ status: 200, description: 'The firing, with acknowledged_at (the first acknowledgement is kept)', schema: AlertFiringSchema }],
      handler: async (ctx, { params }) => {
        ctx.body = await alerts.acknowledge(workspaceOf(ctx), params.id!);
      },
    }),
  ];
}
