import { ERROR_CATALOGUE, ERROR_CODES } from './error-catalogue.ts';

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The page every `doc_url` points into: one anchor per error code, rendered from the error catalogue. */
export function renderErrorDocs(): string {
  const sections = ERROR_CODES.map((code) => {
    const e = ERROR_CATALOGUE[code];
    const statuses = [e.status, ...(e.otherStatuses ?? [])].join(', ');
    return `<section id="${code}"><h2><a href="#${code}">${code}</a></h2><p><strong>HTTP ${statuses}</strong></p><p>${escapeHtml(e.meaning)}</p><p>Retry: ${escapeHtml(e.retry)}</p></section>`;
  }).join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Linkplane API errors</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem}h2{font-family:monospace}section{border-top:1px solid #ccc}</style>
</head><body><h1>Linkplane API errors</h1>
<p>Every error answers <code>{ "error": { "code", "message", "doc_url", "details"? } }</code>. Clients branch on <code>code</code>; messages may change, codes never do.</p>
${sections}
</body></html>`;
}
