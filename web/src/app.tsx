import { useEffect, useState } from 'preact/hooks';
import { ErrorBoundary, LocationProvider, Route, Router, lazy, useLocation } from 'preact-iso';
import { ErrorBanner } from './components/error-banner.tsx';
import { BASE, to } from './paths.ts';
import { ROUTES, homePath } from './routes.tsx';
import { loadSession, useSession } from './session.ts';
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
  useEffect(() => {
    loadSession().catch(setBootError);
  }, []);

  const isPublic = PUBLIC_PATHS.has(path.replace(/\/$/, ''));
  // Signed out on a private page: to the sign-in form, coming back here afterwards.
  useEffect(() => {
    if (session === null && !isPublic) route(`${to('/sign-in')}?next=${encodeURIComponent(url)}`, true);
  }, [session, isPublic, url, route]);
  // Already signed in (a bookmark of the sign-in page): nothing to do there.
  useEffect(() => {
    if (session && path.replace(/\/$/, '') === to('/sign-in')) route(to('/'), true);
  }, [session, path, route]);

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
  return (
    <Shell>
      {/* A new context starts every screen afresh: nothing of the previous workspace stays on screen. */}
      <ErrorBoundary key={context?.id}>
        <Router>
          {[
            <Route key="home" path={to('/')} component={Home} />,
            ...ROUTES.map((r) => <Route key={r.path} path={to(r.path)} component={r.component} />),
            <Route key="missing" default component={NotFound} />,
          ]}
        </Router>
      </ErrorBoundary>
    </Shell>
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
    if (context) route(to(homePath(context.kind)), true);
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
