/** The page for an unknown slug and for a `block` rule answering 404: byte for byte the same. */
export function notFoundPage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Link not found</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;text-align:center}</style>
</head><body><main><h1>Link not found</h1><p>This short link does not exist.</p></main></body></html>`;
}

/** Our own failure, said plainly; nothing about the cause reaches the visitor. */
export function errorPage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Something went wrong</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;text-align:center}</style>
</head><body><main><h1>Something went wrong</h1><p>Please try this link again in a moment.</p></main></body></html>`;
}
