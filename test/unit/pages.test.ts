import { expect } from 'chai';
import {
  actionPage,
  appLauncherPage,
  errorPage,
  gonePage,
  notFoundPage,
  passwordPage,
  plainPageHeaders,
  unlockedPage,
  warnPage,
} from '../../src/redirect/pages.ts';
import type { ActionPageInput, AppLauncherInput, PageResponse } from '../../src/redirect/pages.ts';
import { contentSecurityPolicy, escapeHtml, safeUrl, styleHash } from '../../src/redirect/page-security.ts';

const DESTINATION = 'https://shop.example.com/spring?utm_source=a&utm_medium=b';

function anActionPage(overrides: Partial<ActionPageInput> = {}): ActionPageInput {
  return { title: 'Spring sale', text: 'Prices go up on Monday.', buttonLabel: 'Shop now', buttonUrl: DESTINATION, ...overrides };
}

function aLauncher(overrides: Partial<AppLauncherInput> = {}): AppLauncherInput {
  return { appUrl: 'shopapp://item/42', fallbackUrl: 'https://apps.example.com/shopapp', delayMs: 1600, platform: 'ios', ...overrides };
}

/** Every interstitial, each with the links it is meant to have and whether it runs its one script. */
const INTERSTITIALS: Array<{ name: string; render: () => PageResponse; links: string[]; script: boolean; form: boolean }> = [
  { name: 'password form', render: () => passwordPage({ actionUrl: '/abc', error: null }), links: [], script: false, form: true },
  {
    name: 'password form after a wrong password',
    render: () => passwordPage({ actionUrl: '/abc', error: 'wrong' }),
    links: [],
    script: false,
    form: true,
  },
  {
    name: 'locked password form',
    render: () => passwordPage({ actionUrl: '/abc', error: 'locked', retryAfterSeconds: 300 }),
    links: [],
    script: false,
    form: true,
  },
  { name: 'password accepted', render: () => unlockedPage({ continueUrl: '/abc' }), links: ['/abc'], script: false, form: false },
  {
    name: 'warning',
    render: () => warnPage({ destination: DESTINATION, continueUrl: DESTINATION }),
    links: [DESTINATION],
    script: false,
    form: false,
  },
  { name: 'page action', render: () => actionPage(anActionPage()), links: [DESTINATION], script: false, form: false },
  {
    name: 'app launcher',
    render: () => appLauncherPage(aLauncher()),
    links: ['shopapp://item/42', 'https://apps.example.com/shopapp'],
    script: true,
    form: false,
  },
  { name: 'gone', render: () => gonePage(), links: [], script: false, form: false },
];

function cspOf(page: PageResponse): Map<string, string> {
  const policy = page.headers['Content-Security-Policy'] ?? '';
  return new Map(policy.split(';').map((d) => d.trim()).filter(Boolean).map((d) => [d.split(' ')[0]!, d.slice(d.indexOf(' ') + 1)]));
}

function attributeValues(html: string, name: string): string[] {
  return [...html.matchAll(new RegExp(`\\s${name}="([^"]*)"`, 'g'))].map((m) => unescapeAttribute(m[1]!));
}

function unescapeAttribute(value: string): string {
  return value.replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]!);
}

function textOf(html: string, tag: string): string[] {
  return [...html.matchAll(new RegExp(`<${tag}[^>]*>([\\s\\S]*?)</${tag}>`, 'g'))].map((m) => m[1]!);
}

describe('redirect pages', () => {
  describe('every interstitial', () => {
    for (const page of INTERSTITIALS) {
      describe(page.name, () => {
        it('carries the security headers: nosniff, no referrer, no store, no framing, HTML in UTF-8', () => {
          const { headers } = page.render();
          expect(headers).to.include({
            'Content-Type': 'text/html; charset=utf-8',
            'X-Content-Type-Options': 'nosniff',
            'Referrer-Policy': 'no-referrer',
            'Cache-Control': 'no-store',
            'X-Frame-Options': 'DENY',
          });
        });

        it('has a strict CSP: nothing by default, no base or framing, a form only where it posts, a script only where it runs', () => {
          const csp = cspOf(page.render());
          expect(csp.get('default-src')).to.equal("'none'");
          expect(csp.get('img-src')).to.equal("'none'");
          expect(csp.get('base-uri')).to.equal("'none'");
          expect(csp.get('frame-ancestors')).to.equal("'none'");
          expect(csp.get('form-action')).to.equal(page.form ? "'self'" : "'none'");
          expect(csp.get('style-src')).to.match(/^'nonce-[A-Za-z0-9+/]{22}=='$/);
          expect(csp.get('script-src')).to.equal(page.script ? csp.get('style-src') : "'none'");
          expect(csp.get('require-trusted-types-for')).to.equal("'script'");
        });

        it('gives every inline style and script the nonce of its own CSP, and a fresh nonce per response', () => {
          const first = page.render();
          const second = page.render();
          const nonce = /'nonce-([^']+)'/.exec(first.headers['Content-Security-Policy']!)![1]!;
          const used = attributeValues(first.html, 'nonce');
          expect(used).to.have.length(page.script ? 2 : 1);
          expect(used.every((n) => n === nonce)).to.equal(true);
          expect(first.html.match(/<(style|script)\b/g)).to.have.length(used.length);
          expect(second.headers['Content-Security-Policy']).not.to.contain(nonce);
          expect(second.html).not.to.contain(nonce);
        });

        it('references no asset at all, and links only where it is meant to', () => {
          const { html } = page.render();
          expect(html).not.to.match(/\ssrc=/);
          expect(html).not.to.match(/<(link|img|iframe|object|embed|base)\b/);
          expect(html).not.to.match(/url\(/);
          expect(attributeValues(html, 'href')).to.deep.equal(page.links);
        });

        it('is one English document with a viewport, one main and one heading', () => {
          const { html } = page.render();
          expect(html).to.match(/^<!doctype html>\n<html lang="en">/);
          expect(html).to.contain('<meta name="viewport" content="width=device-width, initial-scale=1">');
          expect(html.match(/<main\b/g)).to.have.length(1);
          expect(html.match(/<h1>/g)).to.have.length(1);
          expect(html).to.contain(':focus-visible{outline:3px solid');
        });
      });
    }
  });

  describe('escaping', () => {
    it('renders a page title, text and button label holding markup as inert text', () => {
      const { html } = actionPage(
        anActionPage({ title: '<script>alert(1)</script>', text: '<img src=x onerror=alert(2)>', buttonLabel: '"><b>x</b>' }),
      );
      expect(html).not.to.contain('<script>');
      expect(html).not.to.contain('<img');
      expect(html).not.to.contain('<b>');
      expect(textOf(html, 'h1')).to.deep.equal(['&lt;script&gt;alert(1)&lt;/script&gt;']);
      expect(textOf(html, 'title')).to.deep.equal(['&lt;script&gt;alert(1)&lt;/script&gt;']);
      expect(html).to.contain('&lt;img src=x onerror=alert(2)&gt;');
      expect(html).to.contain('&quot;&gt;&lt;b&gt;x&lt;/b&gt;</a>');
    });

    it('escapes & < > " and \' so a URL cannot leave its attribute', () => {
      expect(escapeHtml(`a&b<c>d"e'f`)).to.equal('a&amp;b&lt;c&gt;d&quot;e&#39;f');
      const hostile = `https://evil.example/?q="><script>x</script>'&y=1`;
      const { html } = warnPage({ destination: hostile, continueUrl: hostile });
      expect(html).not.to.contain('<script>');
      expect(attributeValues(html, 'href')).to.deep.equal([hostile]);
      expect(html).to.contain('href="https://evil.example/?q=&quot;&gt;&lt;script&gt;x&lt;/script&gt;&#39;&amp;y=1"');
    });

    it('never links to a code-running scheme, whatever its case or the whitespace hiding it', () => {
      for (const url of ['javascript:alert(1)', ' JaVaScRiPt:alert(1)', 'java\tscript:alert(1)', 'data:text/html,<b>', 'vbscript:x']) {
        expect(safeUrl(url), url).to.equal('about:blank');
        expect(attributeValues(actionPage(anActionPage({ buttonUrl: url })).html, 'href')).to.deep.equal(['about:blank']);
      }
      for (const url of ['https://example.com/a', 'myapp://open?id=1', 'intent://scan/#Intent;scheme=zxing;end', '/abc?x=1']) {
        expect(safeUrl(url), url).to.equal(url);
      }
    });

    it('keeps the line breaks of a page text and shows it as plain text', () => {
      const { html } = actionPage(anActionPage({ text: 'Line one\nLine <two>' }));
      expect(textOf(html, 'p')).to.include('Line one\nLine &lt;two&gt;');
      expect(html).to.contain('.text{white-space:pre-line}');
    });
  });

  describe('password form', () => {
    it('posts a labelled, autofocused password field with the current-password hint to the action URL', () => {
      const page = passwordPage({ actionUrl: '/abc?x=1&y=2', error: null });
      expect(page.status).to.equal(200);
      expect(page.html).to.contain('<form method="post" action="/abc?x=1&amp;y=2" enctype="application/x-www-form-urlencoded">');
      expect(page.html).to.contain('<label for="password">Password</label>');
      expect(page.html).to.match(/<input id="password" name="password" type="password" autocomplete="current-password" required autofocus>/);
      expect(page.html).to.contain('<p id="password-error" class="error" role="alert"></p>');
    });

    it('says a wrong password in the alert region, ties it to the field and answers 403', () => {
      const page = passwordPage({ actionUrl: '/abc', error: 'wrong' });
      expect(page.status).to.equal(403);
      expect(textOf(page.html, 'p')).to.include('That password is not correct. Please try again.');
      expect(page.html).to.match(/<input [^>]*aria-describedby="password-error" aria-invalid="true">/);
    });

    it('disables the form while locked and says when to retry, in words and in Retry-After', () => {
      const page = passwordPage({ actionUrl: '/abc', error: 'locked', retryAfterSeconds: 290 });
      expect(page.status).to.equal(429);
      expect(page.headers['Retry-After']).to.equal('290');
      expect(page.html).to.contain('<fieldset disabled>');
      expect(page.html).not.to.contain('autofocus');
      expect(textOf(page.html, 'p')).to.include('Too many attempts. You can try again in 5 minutes.');
      expect(passwordPage({ actionUrl: '/abc', error: 'locked', retryAfterSeconds: 30 }).html).to.contain('try again in 30 seconds.');
    });

    it('sends the browser on after a correct password with Refresh, never as a redirect of the form post', () => {
      const page = unlockedPage({ continueUrl: '/abc?x=1' });
      expect(page.status).to.equal(200);
      expect(page.headers['Refresh']).to.equal('0; url=/abc?x=1');
      expect(unlockedPage({ continueUrl: '/ab c/é' }).headers['Refresh']).to.equal('0; url=/ab%20c/%C3%A9');
    });
  });

  describe('warning, page action, launcher and gone', () => {
    it('shows the destination host prominently (in ASCII) and the full URL, and continues only by a link', () => {
      const { html, status } = warnPage({ destination: 'https://bücher.example/a?b=1', continueUrl: '/abc?continue=1' });
      expect(status).to.equal(200);
      expect(textOf(html, 'p')).to.include.members(['xn--bcher-kva.example', 'https://bücher.example/a?b=1']);
      expect(html).to.contain('<p class="host">xn--bcher-kva.example</p>');
      expect(html).to.contain('<a class="button" href="/abc?continue=1">Continue to xn--bcher-kva.example</a>');
      expect(html).not.to.match(/<script|http-equiv/i);
    });

    it('fills in a title and a button label the page rule leaves out, and omits a missing text', () => {
      const { html } = actionPage(anActionPage({ title: null, text: null, buttonLabel: '  ' }));
      expect(textOf(html, 'h1')).to.deep.equal(['Before you continue']);
      expect(textOf(html, 'a')).to.deep.equal(['Continue']);
      expect(html).not.to.contain('class="text"');
    });

    it('gives the launcher its delay and both links, and keeps the URLs out of the script source', () => {
      const { html } = appLauncherPage(aLauncher({ delayMs: 2500, appUrl: 'shopapp://x?a=1&b="2"' }));
      expect(html).to.contain('data-delay-ms="2500"');
      expect(textOf(html, 'a')).to.deep.equal(['Open in app', 'Continue']);
      const [script] = textOf(html, 'script');
      expect(script).not.to.contain('shopapp');
      expect(script).to.contain('location.replace(fallbackUrl)');
    });

    it('answers 410 for a link that expired or was removed', () => {
      const page = gonePage();
      expect(page.status).to.equal(410);
      expect(textOf(page.html, 'h1')).to.deep.equal(['Link no longer available']);
    });
  });

  describe('404 and error pages', () => {
    it('renders the same bytes on every call, so an unknown slug and a blocked link look the same', () => {
      expect(notFoundPage()).to.equal(notFoundPage());
      expect(notFoundPage()).not.to.contain('nonce');
    });

    it('allows exactly their fixed inline style by hash, and nothing else', () => {
      const csp = plainPageHeaders()['Content-Security-Policy']!;
      for (const html of [notFoundPage(), errorPage()]) {
        const [style] = textOf(html, 'style');
        expect(csp).to.contain(`style-src '${styleHash(style!)}'`);
      }
      expect(csp).to.equal(contentSecurityPolicy({ styleHashes: [styleHash(textOf(notFoundPage(), 'style')[0]!)] }));
      expect(csp).to.contain("script-src 'none'");
      expect(plainPageHeaders()).to.include({ 'Referrer-Policy': 'no-referrer', 'X-Frame-Options': 'DENY' });
    });
  });
});
