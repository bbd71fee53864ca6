// Dashboard downloads. A browser writes a file to disk as it arrives only when it follows a plain link, and a plain
// link cannot carry Linkplane-Context, which every dashboard call to /v1 needs: the CSV export was fetched into the
// tab's memory first (a million clicks is some 300 MB of text) and only then handed over to be saved.
// The dashboard now asks for a ticket (POST /auth/downloads, a state-changing call: the session's CSRF token) and
// follows the link it gets: GET /auth/downloads/<ticket> answers exactly as the /v1 GET the ticket names answers
// that session in that context, with the file named for saving. A ticket is the request (path, query, context)
// and the session's id, sealed with the server's secret. It opens for one minute and for its own session only (the
// session cookie is still required and checked again, with the membership, by the /v1 gate), and only for the
// paths files are downloaded from. A link met on another site cannot be forged, and on its own it opens nothing.
import { Type, type Static } from '@sinclair/typebox';
import type { Next } from 'koa';
import type { ApiContext } from '../http/context.ts';
import { route, type RouteSpec } from '../http/route-table.ts';
import { DateTime, StringEnum, closed } from '../platform/schema.ts';
import { NoSessionError, NotFoundError } from '../platform/errors.ts';
import { seal, unseal } from '../platform/sealed.ts';
import type { AuthService } from './auth.service.ts';
import { signedInOf } from './auth.routes.ts';
import { ContextQuery } from './auth.schemas.ts';
import { markPrivate, readSessionToken } from '../http/session-cookie.ts';

/** Where tickets are followed (under /auth, outside /v1 and its OpenAPI document). */
export const DOWNLOADS_PATH = '/auth/downloads';
const TICKET_TTL_MS = 60_000;

/**
 * The /v1 GETs a ticket may name, with the name the saved file gets (and the day it was saved) and its extension:
 * the links export is CSV or JSON Lines as its `format` asks.
 */
const DOWNLOADABLE = {
  '/v1/analytics/export.csv': { name: 'clicks', extension: () => 'csv' },
  '/v1/links/export': { name: 'links', extension: (query: URLSearchParams) => (query.get('format') === 'jsonl' ? 'jsonl' : 'csv') },
} as const;
type Downloadable = keyof typeof DOWNLOADABLE;

function savedName(path: Downloadable, query: string): string {
  const { name, extension } = DOWNLOADABLE[path];
  return `${name}-${new Date().toISOString().slice(0, 10)}.${extension(new URLSearchParams(query))}`;
}

export const DownloadBody = Type.Object(
  {
    context: ContextQuery.properties.context,
    path: StringEnum(Object.keys(DOWNLOADABLE) as Downloadable[]),
    query: Type.String({ maxLength: 4096, description: 'The query string of the GET, without the leading `?`' }),
  },
  closed,
);
export type DownloadRequest = Static<typeof DownloadBody>;
export const DownloadTicketSchema = Type.Object({ url: Type.String({ description: 'Follow it (a plain link) within a minute' }), expires_at: DateTime() }, closed);

interface Ticket {
  /** The session's id. */
  s: string;
  /** Context, path and query of the GET. */
  c: string;
  p: Downloadable;
  q: string;
  /** Expiry, epoch milliseconds. */
  e: number;
}

export class DownloadTickets {
  private readonly secretKey: string;

  constructor(secretKey: string) {
    this.secretKey = secretKey;
  }

  issue(sessionId: string, request: DownloadRequest, now = Date.now()): { ticket: string; expires: number } {
    const ticket: Ticket = { s: sessionId, c: request.context, p: request.path, q: request.query, e: now + TICKET_TTL_MS };
    return { ticket: seal(this.secretKey, 'download', ticket), expires: ticket.e };
  }

  /** The ticket's request, when it is one this server sealed, still open, for this session; else null. */
  open(value: string, sessionId: string, now = Date.now()): Ticket | null {
    const ticket = unseal(this.secretKey, 'download', value) as Ticket | null;
    if (typeof ticket !== 'object' || ticket === null || ticket.s !== sessionId || !(ticket.e > now) || !Object.hasOwn(DOWNLOADABLE, ticket.p)) return null;
    return ticket;
  }
}

/** POST /auth/downloads: a ticket for the signed-in session (paths relative to /auth). */
export function downloadRoutes(tickets: DownloadTickets, auth: AuthService): RouteSpec[] {
  return [
    route({
      method: 'POST',
      path: '/downloads',
      operationId: 'createDownloadTicket',
      tag: 'Dashboard sessions',
      summary: 'A link that downloads a /v1 file (the analytics CSV or the links export) for this session and context, open for a minute',
      auth: null,
      body: DownloadBody,
      responses: [{ status: 201, description: 'The link', schema: DownloadTicketSchema }],
      handler: async (ctx, { body }) => {
        const { session } = signedInOf(ctx);
        // Refused now rather than when the link is followed, where the browser would only show a failed download.
        await auth.principalFor(session, body.context);
        const { ticket, expires } = tickets.issue(session._id, body);
        ctx.status = 201;
        ctx.body = { url: `${DOWNLOADS_PATH}/${ticket}`, expires_at: new Date(expires).toISOString() };
      },
    }),
  ];
}

/**
 * GET /auth/downloads/<ticket>: the ticket's GET, answered by `reads` (the /v1 chain of GETs, gate included) for
 * the session of the cookie. An unknown, expired or foreign ticket is 404 `not_found`; no session, 401.
 */
export function followDownload(tickets: DownloadTickets, auth: AuthService, reads: (ctx: ApiContext, next?: Next) => Promise<unknown>) {
  return async function download(ctx: ApiContext): Promise<void> {
    markPrivate(ctx);
    const signedIn = await auth.authenticate(readSessionToken(ctx.get('Cookie')));
    if (!signedIn) throw new NoSessionError();
    const ticket = tickets.open(ctx.path.slice(DOWNLOADS_PATH.length + 1), signedIn.session._id);
    if (!ticket) throw new NotFoundError('download link (it works for one minute, in the session that asked for it)');
    ctx.path = ticket.p;
    ctx.querystring = ticket.q;
    // The session stands for the key, as for any dashboard call: never a key sent along.
    delete ctx.request.headers.authorization;
    ctx.request.headers['linkplane-context'] = ticket.c;
    await reads(ctx);
    if (ctx.status === 200) ctx.set('Content-Disposition', `attachment; filename="${savedName(ticket.p, ticket.q)}"`);
  };
}
