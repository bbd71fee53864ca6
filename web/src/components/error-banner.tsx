import { ApiError, describeError } from '../api.ts';

/** A failure that belongs to no single field, announced at once (role=alert). */
export function ErrorBanner({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  // The code helps whoever reads logs or asks support; a refused form says what to fix in words instead.
  const code = error instanceof ApiError && !['network', 'validation_failed'].includes(error.code) ? error.code : null;
  return (
    <div class="error-banner" role="alert">
      <strong>{title ?? 'Something went wrong'}</strong>
      <p>
        {describeError(error)}
        {code && <span class="error-code"> ({code})</span>}
      </p>
    </div>
  );
}
