import { ApiError, describeError } from '../api.ts';

/** A failure that belongs to no single field, announced at once (role=alert). */
export function ErrorBanner({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  const code = error instanceof ApiError ? error.code : null;
  return (
    <div class="error-banner" role="alert">
      <strong>{title ?? 'Something went wrong'}</strong>
      <p>
        {describeError(error)}
        {code && code !== 'network' && <span class="error-code"> ({code})</span>}
      </p>
    </div>
  );
}
