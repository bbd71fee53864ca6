// The public report form on every redirect domain, at `/<slug>/report`. The redirect's hot path never sees it: a
// path with a second segment is not a slug, so the handler passes it to the Koa app, where this middleware runs.
import type { Middleware, Next } from 'koa';
import type { ApiContext, ApiState } from '../http/context.ts';
import { bodyValidator } from '../http/validation.ts';
import { RateLimitedError, ValidationError } from '../platform/errors.ts';
import { clientIp } from '../platform/client-ip.ts';
import { notFoundResponse, reportPage, reportThanksPage, type PageResponse } from '../redirect/pages.ts';
import type { LinkResolver } from '../redirect/resolver.ts';
import type { ReportService } from './report.service.ts';
import { ReportFormSchema } from './report.schemas.ts';

const PATH = /^\/([A-Za-z0-9][A-Za-z0-9_-]{0,99})\/report\/?$/;
const FORM_LIMIT_BYTES = 8192;
const validateForm = bodyValidator(ReportFormSchema);

export interface ReportFormOptions {
  resolver: LinkResolver;
  reports: ReportService;
  trustedProxyHops: number;
}

export function reportForm(options: ReportFormOptions): Middleware<ApiState> {
  const { resolver, reports } = options;
  const send = (ctx: ApiContext, page: PageResponse) => {
    ctx.status = page.status;
    ctx.set(page.headers);
    ctx.body = page.html;
  };

  return async function reportFormIfPath(context, next: Next) {
    const ctx = context as unknown as ApiContext;
    const slug = PATH.exec(ctx.path)?.[1];
    if (slug === undefined) {
      await next();
      return;
    }
    const link = (await resolver.load((ctx.get('Host') || '').toLowerCase(), slug))?.link ?? null;
    if (link === null) return send(ctx, notFoundResponse());
    const actionUrl = `/${slug}/report`;
    const shortUrl = reports.shortUrlOf(link);
    if (ctx.method === 'GET' || ctx.method === 'HEAD') return send(ctx, reportPage({ actionUrl, shortUrl }));
    if (ctx.method !== 'POST') {
      ctx.status = 405;
      ctx.set('Allow', 'GET, HEAD, POST');
      ctx.body = '';
      return;
    }
    const form = await readForm(ctx);
    const values = {
      reason: form?.get('reason') ?? '',
      details: form?.get('details') ?? '',
      reporter_contact: (form?.get('reporter_contact') ?? '').trim(),
    };
    try {
      // Empty optional fields are absent, as a browser cannot leave a field out.
      const input = validateForm(Object.fromEntries(Object.entries(values).filter(([, v]) => v !== '')));
      await reports.admit(clientIp(ctx.req.headers, ctx.req.socket.remoteAddress, options.trustedProxyHops) ?? 'unknown');
      await reports.file(link, input, 'form');
      return send(ctx, reportThanksPage());
    } catch (error) {
      if (error instanceof ValidationError) {
        const fields = (error.details ?? []).map((d) => (d.path === 'reporter_contact' ? 'the e-mail address' : d.path)).join(', ');
        return send(ctx, reportPage({ actionUrl, shortUrl, values, error: { status: 422, message: `Please check ${fields}.` } }));
      }
      if (error instanceof RateLimitedError) {
        const message = `Too many reports from your network; please try again in ${error.retryAfterSeconds} seconds.`;
        return send(ctx, reportPage({ actionUrl, shortUrl, values, error: { status: 429, message, retryAfterSeconds: error.retryAfterSeconds } }));
      }
      throw error;
    }
  };
}

/** An `application/x-www-form-urlencoded` body of at most FORM_LIMIT_BYTES; null when larger or of another type. */
async function readForm(ctx: ApiContext): Promise<URLSearchParams | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= FORM_LIMIT_BYTES) chunks.push(chunk);
  }
  if (size > FORM_LIMIT_BYTES || !ctx.get('Content-Type').startsWith('application/x-www-form-urlencoded')) return null;
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}
