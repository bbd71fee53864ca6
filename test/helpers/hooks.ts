// Mocha root hooks (loaded by .mocharc.json): when the run ends, delete the JetStream streams its tests created on
// the shared nats-server, so repeated runs (CI, developers) do not fill its store.
import { NATS_URL, usedPrefixes } from './env.ts';
import { deletePrefixedStreams } from './nats-cleanup.ts';

export const mochaHooks = {
  async afterAll(): Promise<void> {
    await deletePrefixedStreams(NATS_URL, usedPrefixes);
  },
};
