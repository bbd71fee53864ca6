// The `helm test` check (templates/tests/readyz.yaml): GET $READYZ_URL, print what it answered, and exit 0 only on
// 200. Plain JavaScript for `node --eval`, so it runs in the release's own image.
const url = process.env.READYZ_URL;
const timeout = Number(process.env.READYZ_TIMEOUT_MS || 10000);
fetch(url, { signal: AbortSignal.timeout(timeout) }).then(
  async (response) => {
    console.log(`${url}: ${response.status} ${await response.text()}`);
    process.exit(response.status === 200 ? 0 : 1);
  },
  (error) => {
    console.error(`${url}: ${error && error.cause ? error.cause.message : error}`);
    process.exit(1);
  },
);
