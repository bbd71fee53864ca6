import { escapeHtml, safeUrl, securityHeaders, styleHash } from './page-security.ts';
import type { PageResponse } from './pages.ts';

/** The card a social or chat crawler is shown: the link's custom preview, or its destination's own tags. */
export interface PreviewCard {
  title: string | null;
  description: string | null;
  /** An absolute http(s) URL; the crawler fetches it itself. */
  image: string | null;
}

export interface PreviewPageInput {
  card: PreviewCard;
  /** The short URL itself: `og:url` names it, so a crawler that follows `og:url` comes back here, not to the destination. */
  shortUrl: string;
  /** Where people are sent; a plain link on the page for a crawler that shows the body. */
  destination: string;
}

const STYLE = 'body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1.25rem;color:#1b1b1b}a{color:#0b57d0}';
const STYLE_HASH = styleHash(STYLE);

/**
 * The page the redirect answers a `social_preview` visitor with: Open Graph and Twitter Card tags, every value
 * escaped, under the same policy as every other page of the redirect (no script, no image loaded by the page itself:
 * `og:image` is a URL the crawler fetches on its own). A fixed style allowed by hash, so the bytes depend only on the
 * link. Not cached: the next change of the link's preview must reach the next crawl.
 */
export function previewPage(input: PreviewPageInput): PageResponse {
  const { card, shortUrl, destination } = input;
  const title = card.title ?? hostOf(destination);
  const meta: string[] = [
    property('og:type', 'website'),
    property('og:url', shortUrl),
    property('og:title', title),
    named('twitter:card', card.image ? 'summary_large_image' : 'summary'),
    named('twitter:title', title),
  ];
  if (card.description) meta.push(property('og:description', card.description), named('twitter:description', card.description), named('description', card.description));
  if (card.image) meta.push(property('og:image', card.image), named('twitter:image', card.image));
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
${meta.join('\n')}
<style>${STYLE}</style>
</head><body><main><h1>${escapeHtml(title)}</h1>${card.description ? `<p>${escapeHtml(card.description)}</p>` : ''}
<p><a href="${escapeHtml(safeUrl(destination))}">${escapeHtml(hostOf(destination))}</a></p></main></body></html>`;
  return { status: 200, headers: securityHeaders({ styleHashes: [STYLE_HASH] }), html };
}

function property(name: string, content: string): string {
  return `<meta property="${name}" content="${escapeHtml(content)}">`;
}

function named(name: string, content: string): string {
  return `<meta name="${name}" content="${escapeHtml(content)}">`;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
