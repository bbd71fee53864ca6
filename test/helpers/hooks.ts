// Mocha root hooks (loaded by .mocharc.json): when the run ends, delete the JetStream streams its tests created on
// the shared nats-server, so repeated runs (CI, developers) do not fill its store.
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { NATS_URL, usedPrefixes } from './env.ts';

export const mochaHooks = {
  async afterAll(): Promise<void> {
    if (usedPrefixes.size === 0) return;
    const nc = await connect({ servers: NATS_URL, timeout: 2000 }).catch(() => null);
    if (!nc) return;
    try {
      const jsm = await jetstreamManager(nc);
      const prefixes = [...usedPrefixes];
      for await (const name of jsm.streams.names()) {
        if (prefixes.some((p) => name.startsWith(p))) await jsm.streams.delete(name).catch(() => false);
      }
    } finally {
      await nc.close();
    }
  },
};
