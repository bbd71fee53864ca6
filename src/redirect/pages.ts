import { escapeHtml, newNonce, safeUrl, securityHeaders, styleHash } from './page-security.ts';

/**
 * The pages the redirect serves itself. Each is whole in one response: no external asset (fonts, images, scripts),
 * every interpolated string escaped, a fresh nonce per response for its inline style and, on the app launcher only,
 * its inline script. The HTTP layer writes `status`, `headers` and `html` as they are.
 */
export interface PageResponse {
  status: number;
  headers: Record<string, string>;
  html: string;
}

const PLAIN_STYLE = 'body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;text-align:center}';
const PLAIN_STYLE_HASH = styleHash(PLAIN_STYLE);

/** The page for an unknown slug and for a `block` rule answering 404: byte for byte the same. */
export function notFoundPage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Link not found</title>
<style>${PLAIN_STYLE}</style>
</head><body><main><h1>Link not found</h1><p>This short link does not exist.</p></main></body></html>`;
}

/** Our own failure, said plainly; nothing about the cause reaches the visitor. */
export function errorPage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Something went wrong</title>
<style>${PLAIN_STYLE}</style>
</head><body><main><h1>Something went wrong</h1><p>Please try this link again in a moment.</p></main></body></html>`;
}

/**
 * Headers for `notFoundPage()` and `errorPage()`: the same policy as the interstitials, but their fixed style is
 * allowed by hash, not nonce, so their bytes never vary (an unknown slug and a blocked link stay identical).
 */
export function plainPageHeaders(): Record<string, string> {
  return securityHeaders({ styleHashes: [PLAIN_STYLE_HASH] });
}

/** The 404 as a response: the one answer for an unknown slug, an unknown host and a `block` 404 rule. */
export function notFoundResponse(): PageResponse {
  return { status: 404, headers: plainPageHeaders(), html: notFoundPage() };
}

/** Our own failure as a response (500). */
export function errorResponse(): PageResponse {
  return { status: 500, headers: plainPageHeaders(), html: errorPage() };
}

// Contrast (WCAG AA at least): text #1b1b1b and links/buttons #0b57d0 on white, white on #0b57d0, errors #b3261e.
const STYLE = `*{box-sizing:border-box}
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1b1b;background:#fff;margin:0}
main{max-width:34rem;margin:3rem auto;padding:0 1.25rem}
h1{font-size:1.5rem;line-height:1.25;margin:0 0 1rem}
p{margin:0 0 1rem}
a{color:#0b57d0}
.host{font-size:1.375rem;font-weight:700;overflow-wrap:anywhere}
.url,.text{overflow-wrap:anywhere}
.text{white-space:pre-line}
.button,button{display:inline-block;font:inherit;font-weight:600;color:#fff;background:#0b57d0;border:0;border-radius:.5rem;padding:.625rem 1.25rem;text-decoration:none;cursor:pointer}
.secondary{color:#0b57d0;background:#fff;border:2px solid #0b57d0;padding:.5rem 1.125rem}
.actions{display:flex;flex-wrap:wrap;gap:.75rem}
label{display:block;font-weight:600;margin-bottom:.25rem}
input,select,textarea{display:block;width:100%;font:inherit;padding:.5rem .75rem;border:2px solid #5f6368;border-radius:.5rem;margin-bottom:1rem}
fieldset{border:0;margin:0;padding:0}
fieldset:disabled button{background:#5f6368;cursor:not-allowed}
.error{color:#b3261e;font-weight:600}
.error:empty{display:none}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible{outline:3px solid #1b1b1b;outline-offset:2px}
@media (prefers-color-scheme:dark){body{color:#e8eaed;background:#202124}a{color:#8ab4f8}
.button,button{background:#8ab4f8;color:#202124}.secondary{color:#8ab4f8;background:#202124;border-color:#8ab4f8}
.error{color:#f2b8b5}a:focus-visible,button:focus-visible,input:focus-visible{outline-color:#e8eaed}}`;

interface Layout {
  status: number;
  title: string;
  /** Already-escaped markup inside `<main>`. */
  body: string;
  /** Attributes of `<main>`, already escaped. */
  mainAttributes?: string;
  script?: string;
  form?: boolean;
  extraHeaders?: Record<string, string>;
}

function render(layout: Layout): PageResponse {
  const { status, title, body, mainAttributes = '', script, form = false, extraHeaders = {} } = layout;
  const nonce = newNonce();
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">${STYLE}</style>
</head><body><main${mainAttributes}>
${body}
</main>${script === undefined ? '' : `<script nonce="${nonce}">${script}</script>`}</body></html>`;
  return {
    status,
    headers: { ...securityHeaders({ nonce, script: script !== undefined, form }), ...extraHeaders },
    html,
  };
}

/** `href="…"` for a link the page is meant to have, with a code-running scheme neutralised. */
function href(url: string): string {
  return `href="${escapeHtml(safeUrl(url))}"`;
}

export interface PasswordPageInput {
  /** Where the form posts, on the redirect's own origin (the short link itself, typically). */
  actionUrl: string;
  /** `wrong`: the last attempt failed; `locked`: too many attempts, the form is disabled. */
  error: null | 'wrong' | 'locked';
  /** With `locked`: when the visitor may try again; also sent as `Retry-After`. */
  retryAfterSeconds?: number;
}

/**
 * The password form: POSTs `application/x-www-form-urlencoded` field `password` to `actionUrl`.
 * Status 200 for the form, 403 after a wrong password, 429 (with `Retry-After`) while locked.
 * After a correct password answer with `unlockedPage`, not a redirect: see there.
 */
export function passwordPage(input: PasswordPageInput): PageResponse {
  const { actionUrl, error } = input;
  const retryAfter = Math.max(1, Math.ceil(input.retryAfterSeconds ?? 60));
  const message =
    error === 'wrong'
      ? 'That password is not correct. Please try again.'
      : error === 'locked'
        ? `Too many attempts. You can try again in ${duration(retryAfter)}.`
        : '';
  const locked = error === 'locked';
  const body = `<h1>This link is protected</h1>
<p>Enter the password to continue.</p>
<p id="password-error" class="error" role="alert">${escapeHtml(message)}</p>
<form method="post" action="${escapeHtml(safeUrl(actionUrl))}" enctype="application/x-www-form-urlencoded">
<fieldset${locked ? ' disabled' : ''}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${locked ? '' : ' autofocus'}${
    error === null ? '' : ' aria-describedby="password-error"'
  }${error === 'wrong' ? ' aria-invalid="true"' : ''}>
<button type="submit">Continue</button>
</fieldset>
</form>`;
  return render({
    status: error === 'wrong' ? 403 : locked ? 429 : 200,
    title: 'Password required',
    body,
    form: true,
    extraHeaders: locked ? { 'Retry-After': String(retryAfter) } : {},
  });
}

function duration(seconds: number): string {
  if (seconds < 60) return seconds === 1 ? '1 second' : `${seconds} seconds`;
  const minutes = Math.ceil(seconds / 60);
  return minutes === 1 ? '1 minute' : `${minutes} minutes`;
}

/**
 * The answer to a correct password. Chromium checks `form-action` against every redirect of a form submission, so
 * a 303 that ends at another origin (the destination) would be blocked; this 200 page instead sends the browser on
 * with a `Refresh` header (not governed by CSP) to `continueUrl`, a same-origin URL that now carries the unlock
 * cookie and redirects as usual. The link is there for browsers that ignore `Refresh`.
 */
export function unlockedPage(input: { continueUrl: string }): PageResponse {
  const target = safeUrl(input.continueUrl);
  return render({
    status: 200,
    title: 'Password accepted',
    body: `<h1>Password accepted</h1>
<p><a class="button" ${href(target)}>Continue</a></p>`,
    // A header value holds no control or non-ASCII characters: percent-encode them, as a browser would.
    extraHeaders: { Refresh: `0; url=${target.replace(/[^\x21-\x7e]/g, (c) => encodeURIComponent(c))}` },
  });
}

/**
 * A `warn` rule, or a link warned after an abuse report (`reportedAs` then names the reason): where the link goes,
 * host first, and a link to continue; nothing happens by itself.
 */
export function warnPage(input: { destination: string; continueUrl: string; reportedAs?: string }): PageResponse {
  const { destination, continueUrl, reportedAs } = input;
  // URL gives the host in ASCII (punycode), so a look-alike international domain shows as what it is.
  const host = URL.canParse(destination) ? new URL(destination).host || destination : destination;
  const reported = reportedAs === undefined ? '' : `<p class="error">This link was reported as ${escapeHtml(reportedAs)}.</p>\n`;
  const body = `<h1>Check where this link goes</h1>
${reported}<p>This link leads to</p>
<p class="host">${escapeHtml(host)}</p>
<p class="url">${escapeHtml(destination)}</p>
<p>Continue only if you trust this site.</p>
<p><a class="button" ${href(continueUrl)}>Continue to ${escapeHtml(host)}</a></p>`;
  return render({ status: 200, title: `Check where this link goes: ${host}`, body });
}

export interface ActionPageInput {
  title: string | null;
  /** Plain text; line breaks are kept, markup is shown as text. */
  text: string | null;
  buttonLabel: string | null;
  /** Where the button goes: the rule's `button_url`, or the link's continuation when the rule has none. */
  buttonUrl: string;
}

/** The `page` rule action: a title, a text and one button, with defaults for what the rule leaves out. */
export function actionPage(input: ActionPageInput): PageResponse {
  const title = nonEmpty(input.title) ?? 'Before you continue';
  const label = nonEmpty(input.buttonLabel) ?? 'Continue';
  const text = nonEmpty(input.text);
  const body = `<h1>${escapeHtml(title)}</h1>
${text === null ? '' : `<p class="text">${escapeHtml(text)}</p>\n`}<p><a class="button" ${href(input.buttonUrl)}>${escapeHtml(label)}</a></p>`;
  return render({ status: 200, title, body });
}

function nonEmpty(value: string | null): string | null {
  return value === null || value.trim() === '' ? null : value;
}

export interface AppLauncherInput {
  /** The deep link tried first (an app scheme or a universal/app link). */
  appUrl: string;
  /** Where the page goes when the app did not take over within `delayMs` (the store or the web). */
  fallbackUrl: string;
  delayMs: number;
  platform: 'ios' | 'android';
}

// Static text: the URLs reach the script through the links' escaped attributes, never through script source.
// The app taking over hides the page (visibilitychange, pagehide) or takes focus (blur); any of them cancels the
// fallback. `replace` keeps the launcher out of history, so Back does not re-open the app.
const LAUNCHER_SCRIPT = `(function () {
  var main = document.querySelector('main');
  var appUrl = document.getElementById('open-app').getAttribute('href');
  var fallbackUrl = document.getElementById('continue').getAttribute('href');
  var delay = Number(main.getAttribute('data-delay-ms'));
  var tookOver = false;
  function away() { tookOver = true; }
  document.addEventListener('visibilitychange', function () { if (document.visibilityState === 'hidden') away(); });
  window.addEventListener('pagehide', away);
  window.addEventListener('blur', away);
  setTimeout(function () {
    if (!tookOver && document.visibilityState === 'visible') location.replace(fallbackUrl);
  }, delay);
  if (appUrl !== 'about:blank') location.href = appUrl;
})();`;

/**
 * The mobile app launcher: opens `appUrl`; if the page is still in front after `delayMs`, replaces itself with
 * `fallbackUrl`. Without JavaScript the visitor has both as plain links.
 */
export function appLauncherPage(input: AppLauncherInput): PageResponse {
  const { appUrl, fallbackUrl, platform } = input;
  const delayMs = Math.max(0, Math.round(input.delayMs));
  const body = `<h1>Opening the app</h1>
<p>If the app does not open, you will be taken to the next page shortly.</p>
<p class="actions"><a id="open-app" class="button" ${href(appUrl)}>Open in app</a>
<a id="continue" class="button secondary" ${href(fallbackUrl)}>Continue</a></p>`;
  return render({
    status: 200,
    title: 'Opening the app',
    body,
    mainAttributes: ` data-delay-ms="${delayMs}" data-platform="${escapeHtml(platform)}"`,
    script: LAUNCHER_SCRIPT,
  });
}

/** An expired link without `expired_url`, or a `block` rule answering 410. */
export function gonePage(): PageResponse {
  return render({
    status: 410,
    title: 'Link no longer available',
    body: `<h1>Link no longer available</h1>
<p>This link has expired or was removed.</p>`,
  });
}

/** A link of a workspace its partner suspended, when the partner chose to answer a page (503: it may come back). */
export function suspendedPage(): PageResponse {
  return render({
    status: 503,
    title: 'Link unavailable',
    body: `<h1>Link unavailable</h1>
<p>This link is temporarily unavailable. Please try again later.</p>`,
  });
}

/** A link disabled after an abuse report: 410, and why in general terms. */
export function disabledPage(): PageResponse {
  return render({
    status: 410,
    title: 'Link disabled',
    body: `<h1>Link disabled</h1>
<p>This link was disabled after it was reported as abusive.</p>`,
  });
}

export const REPORT_REASON_LABELS: Record<string, string> = {
  phishing: 'Phishing (asks for passwords or payment details)',
  malware: 'Malware or unwanted software',
  spam: 'Spam',
  scam: 'Scam or fraud',
  illegal: 'Illegal content',
  copyright: 'Copyright infringement',
  other: 'Something else',
};

export interface ReportPageInput {
  /** Where the form posts: the page itself (`/<slug>/report`). */
  actionUrl: string;
  /** The short URL reported, shown to the reporter. */
  shortUrl: string;
  /** Set when a submission was refused: the message, and the status (422, or 429 with Retry-After). */
  error?: { message: string; status: number; retryAfterSeconds?: number };
  values?: { reason?: string; details?: string; reporter_contact?: string };
}

/** The public abuse report form: reason (required), details and a contact address (optional). */
export function reportPage(input: ReportPageInput): PageResponse {
  const { error, values = {} } = input;
  const options = Object.entries(REPORT_REASON_LABELS)
    .map(([value, label]) => `<option value="${value}"${values.reason === value ? ' selected' : ''}>${escapeHtml(label)}</option>`)
    .join('');
  const body = `<h1>Report this link</h1>
<p class="url">${escapeHtml(input.shortUrl)}</p>
<p id="report-error" class="error" role="alert">${escapeHtml(error?.message ?? '')}</p>
<form method="post" action="${escapeHtml(safeUrl(input.actionUrl))}" enctype="application/x-www-form-urlencoded">
<label for="reason">What is wrong with it?</label>
<select id="reason" name="reason" required><option value="">Choose a reason</option>${options}</select>
<label for="details">Details (optional)</label>
<textarea id="details" name="details" maxlength="2000" rows="5">${escapeHtml(values.details ?? '')}</textarea>
<label for="contact">Your e-mail (optional, if we may contact you)</label>
<input id="contact" name="reporter_contact" type="email" maxlength="254" autocomplete="email" value="${escapeHtml(values.reporter_contact ?? '')}">
<button type="submit">Send report</button>
</form>`;
  const retryAfter = error?.retryAfterSeconds;
  return render({
    status: error?.status ?? 200,
    title: 'Report this link',
    body,
    form: true,
    extraHeaders: retryAfter === undefined ? {} : { 'Retry-After': String(retryAfter) },
  });
}

/** After a report was filed. */
export function reportThanksPage(): PageResponse {
  return render({
    status: 201,
    title: 'Report received',
    body: `<h1>Thank you</h1>
<p>Your report was received and will be reviewed.</p>`,
  });
}
