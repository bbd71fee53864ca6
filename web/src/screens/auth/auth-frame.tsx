import type { ComponentChildren } from 'preact';
import { Page } from '../../components/page.tsx';

/** The narrow, navigation-free frame of the pages shown before sign-in. */
export function AuthFrame({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <main id="main" class="container auth-frame">
      <p class="brand-mark" aria-hidden="true">
        Linkplane
      </p>
      <article>
        <Page title={title}>{children}</Page>
      </article>
    </main>
  );
}

/** Where to go after signing in: a dashboard page or an invitation link, never another site. */
export function safeNext(next: string | undefined, fallback: string): string {
  if (next && /^\/(dashboard|auth\/invites)\//.test(next) && !next.startsWith('//')) return next;
  return fallback;
}
