import { useEffect, useState } from 'preact/hooks';
import { ErrorBoundary, LocationProvider, Route, Router, lazy, useLocation } from 'preact-iso';
import { ErrorBanner } from './components/error-banner.tsx';
import { BASE, contextOfPath, inContext, to } from './paths.ts';
import { KIND_NAME, ROUTES, homePath, kindsOf } from './routes.tsx';
import { contextFor, loadSession, loadSessionIfSignedIn, membershipOf, switchContext, useSession } from './session.ts';
import type { ContextKind, Membership } from './session.ts';
import { Shell } from './shell.tsx';

const SignIn = lazy(() => import('./screens/auth/sign-in.screen.tsx'));
const AcceptInvite = lazy(() => import('./screens/auth/accept-invite.screen.tsx'));
const SignInLink = lazy(() => import('./screens/auth/sign-in-link.screen.tsx'));
const ForgotPassword = lazy(() => import('./screens/auth/forgot-password.screen.tsx'));
const ResetPassword = lazy(() => import('./screens/auth/reset-password.screen.tsx'));

/** Pages that need no session. */
const PUBLIC_PATHS = new Set([to('/sign-in'), to('/sign-in/link'), to('/accept-invite'), to('/forgot-password'), to('/reset-password')]);

export function App() {
  return (
    <LocationProvider scope={BASE}>
      <Root />
    </LocationProvider>
  );
}

function Root() {
  const { session, context } = useSession();
  const { path, url, route } = useLocation();
  const [bootError, setBootError] = useState<unknown>(null);
  const isPublic = PUBLIC_PATHS.has(path.replace(/\/$/, ''));
  // A public page (sign-in, an invitation, a sign-in link) asks /auth/config first whether this browser is signed
  // in, and only then for the session: asking straight away would answer 401 on every visit of a person who is not.
  const [asked, setAsked] = useState(false);
  useEffect(() => {
    if (asked) return;
    setAsked(true);
    (isPublic ? loadSessionIfSignedIn() : loadSession()).catch(setBootError);
  }, [isPublic, asked]);

  // Signed out on a private page: to the sign-in form, coming back here afterwards.
  useEffect(() => {
    if (session === null && !isPublic) route(`${to('/sign-in')}?next=${encodeURIComponent(url)}`, true);
  }, [session, isPublic, url, route]);

  const address = isPublic ? null : contextOfPath(path);
  const named = address && session ? membershipOf(address.kind, address.id) : null;
  // The address names the context: adopted before anything below renders, so every call the screen makes
  // carries it (Back and Forward included).
  if (named && named.id !== context?.id) switchContext(named.id);
  // An address without a context (an old bookmark, `/dashboard/`): the same page in the fitting context.
  const page = path.startsWith(BASE) ? path.slice(BASE.length) || '/' : path;
  const legacyTarget = !isPublic && session && !address ? contextFor(page === '/' ? ['workspace', 'partner'] : kindsOf(page)) : null;
  useEffect(() => {
    if (legacyTarget) route(`${inContext(legacyTarget, page)}${url.includes('?') ? url.slice(url.indexOf('?')) : ''}`, true);
  }, [legacyTarget, page, url, route]);

  if (bootError) {
    return (
      <main id="main" class="container">
        <ErrorBanner error={bootError} title="The dashboard could not start" />
      </main>
    );
  }
  if (session === undefined && !isPublic) {
    return (
      <main id="main" class="container" aria-busy="true">
        Loading…
      </main>
    );
  }
  if (isPublic || !session) {
    return (
      <ErrorBoundary>
        <Router>
          <Route path={to('/sign-in')} component={SignIn} />
          <Route path={to('/sign-in/link')} component={SignInLink} />
          <Route path={to('/accept-invite')} component={AcceptInvite} />
          <Route path={to('/forgot-password')} component={ForgotPassword} />
          <Route path={to('/reset-password')} component={ResetPassword} />
          <Route default component={Nothing} />
        </Router>
      </ErrorBoundary>
    );
  }
  if (legacyTarget) {
    return (
      <main id="main" class="container" aria-busy="true">
        Loading…
      </main>
    );
  }
  let screen;
  if (address && !named) screen = <UnknownContext kind={address.kind} />;
  else if (address && named && !kindsOf(address.rest).includes(named.kind)) screen = <WrongContext page={address.rest} here={named} />;
  else {
    screen = (
      <Router>
        {[
          ...(['w', 'p'] as const).flatMap((letter) => [
            <Route key={`${letter}-home`} path={`${BASE}/${letter}/:context`} component={Home} />,
            ...ROUTES.map((r) => <Route key={`${letter}${r.path}`} path={`${BASE}/${letter}/:context${r.path}`} component={r.component} />),
          ]),
          <Route key="missing" default component={NotFound} />,
        ]}
      </Router>
    );
  }
  return (
    <Shell>
      {/* A new context starts every screen afresh: nothing of the previous workspace stays on screen. */}
      <ErrorBoundary key={named?.id ?? context?.id}>{screen}</ErrorBoundary>
    </Shell>
  );
}

/** An address naming a workspace or partner the person is not a member of (any more). */
function UnknownContext({ kind }: { kind: ContextKind }) {
  return (
    <section>
      <h1 tabIndex={-1}>No access to this {KIND_NAME[kind]}</h1>
      <p>
        This address names a {KIND_NAME[kind]} you are not a member of, or one that no longer exists. <a href={to('/')}>Go to the dashboard home</a>.
      </p>
    </section>
  );
}

/**
 * A page of one kind of context opened in another (a workspace's links at a partner's address): instead of the
 * api's refusal, the contexts where the page exists.
 */
function WrongContext({ page, here }: { page: string; here: Membership }) {
  const { session } = useSession();
  const kinds = kindsOf(page);
  const fitting = session?.memberships.filter((m) => kinds.includes(m.kind)) ?? [];
  const wanted = kinds.map((k) => KIND_NAME[k]).join(' or ');
  return (
    <section>
      <h1 tabIndex={-1}>This page belongs to a {wanted}</h1>
      <p>
        You are looking at {here.name}, a {KIND_NAME[here.kind]}; this page shows the data of a {wanted}.
        {fitting.length > 0 ? ' Switch to one:' : ` You are not a member of any ${wanted}.`}
      </p>
      {fitting.length > 0 && (
        <ul>
          {fitting.map((m) => (
            <li key={m.id}>
              <a href={inContext(m, page)}>Switch to {m.name}</a>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Nothing() {
  return null;
}

/** `/dashboard/`: the first screen of the context in view. */
function Home() {
  const { context } = useSession();
  const { route } = useLocation();
  useEffect(() => {
    if (context) route(inContext(context, homePath(context.kind)), true);
  }, [context, route]);
  return null;
}

function NotFound() {
  return (
    <section>
      <h1 tabIndex={-1}>Page not found</h1>
      <p>
        Nothing lives at this address. <a href={to('/')}>Go to the dashboard home</a>.
      </p>
    </section>
  );
}
