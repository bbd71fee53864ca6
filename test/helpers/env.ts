import { randomBase62 } from '../../src/platform/ids.ts';
import type { TestMongo } from './mongo.ts';
import { freePort } from './processes.ts';

export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

/** Every prefix handed out in this run: the root hook deletes their streams when the run ends. */
export const usedPrefixes = new Set<string>();

/** A fresh stream prefix, so each test's JetStream streams and subjects are its own. */
export function natsPrefix(): string {
  const prefix = `t${randomBase62(8)}_`;
  usedPrefixes.add(prefix);
  return prefix;
}

/** The environment a test process runs with: its own database and stream names, ephemeral ports, no log noise. */
export function testEnv(mongo: TestMongo, overrides: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    MONGODB_URI: mongo.uri,
    MONGODB_DB: mongo.dbName,
    NATS_URL,
    NATS_PREFIX: natsPrefix(),
    API_PORT: '0',
    REDIRECT_PORT: '0',
    WORKER_PORT: '0',
    LOG_LEVEL: 'silent',
    OUTBOX_POLL_MS: '50',
    ...overrides,
  };
}

/**
 * `testEnv` for tests that follow short URLs: the redirect listens on a port chosen here, and the default short
 * domain is that address, so a short URL the api returns is one the test can fetch. `base` is its origin.
 */
export async function shortLinkEnv(mongo: TestMongo, overrides: Record<string, string> = {}): Promise<{ env: Record<string, string>; base: string }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  return { env: testEnv(mongo, { SHORT_LINK_BASE_URL: base, REDIRECT_PORT: String(port), ...overrides }), base };
}
