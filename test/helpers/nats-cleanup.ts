// Removing what a run created on a shared nats-server: the tests' root hook and the benchmarks' runner both call it
// with the prefixes they handed out, so nothing of anyone else's is touched.
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';

/**
 * Whether a stream belongs to one of `prefixes`: our own streams are named `<prefix><BASE>`; a KV bucket or an
 * object store named with a prefix lives in the stream `KV_<bucket>` or `OBJ_<bucket>`.
 */
export function ownedStream(name: string, prefixes: readonly string[]): boolean {
  const bare = name.replace(/^(KV|OBJ)_/, '');
  return prefixes.some((p) => name.startsWith(p) || bare.startsWith(p));
}

/**
 * Deletes every JetStream stream (with its consumers), KV bucket and object store of `prefixes` on the server at
 * `url`, and answers how many went. A server that cannot be reached is left alone (0).
 */
export async function deletePrefixedStreams(url: string, prefixes: Iterable<string>): Promise<number> {
  const owned = [...prefixes];
  if (owned.length === 0) return 0;
  const nc = await connect({ servers: url, timeout: 2000 }).catch(() => null);
  if (!nc) return 0;
  let deleted = 0;
  try {
    const jsm = await jetstreamManager(nc);
    const names: string[] = [];
    for await (const name of jsm.streams.names()) if (ownedStream(name, owned)) names.push(name);
    for (const name of names) if (await jsm.streams.delete(name).catch(() => false)) deleted++;
  } finally {
    await nc.close();
  }
  return deleted;
}
