import { Writable } from 'node:stream';
import { loadConfig } from '../../src/config/config.ts';
import { openInfra, type Infra } from '../../src/main/infra.ts';
import { buildApi, type ApiService } from '../../src/main/api.ts';
import { buildWorker, type WorkerService } from '../../src/main/worker.ts';
import { buildRedirect, type RedirectService } from '../../src/main/redirect.ts';

export interface RunningApi {
  url: string;
  infra: Infra;
  api: ApiService;
  stop(): Promise<void>;
}

const discard = new Writable({ write: (_chunk, _enc, done) => done() });

/** The api composition root in this process, listening on a real socket on an ephemeral port. */
export async function startApi(env: Record<string, string>): Promise<RunningApi> {
  const config = loadConfig('api', env);
  const infra = await openInfra(config, env.MONGODB_URI!, { logDestination: discard });
  const api = buildApi(infra);
  await api.start();
  return {
    url: `http://127.0.0.1:${api.port()}`,
    infra,
    api,
    async stop() {
      await api.stop();
      await infra.close();
    },
  };
}

export interface RunningWorker {
  infra: Infra;
  worker: WorkerService;
  stop(): Promise<void>;
}

/** The worker composition root in this process (outbox relay, webhook consumers), started. */
export async function startWorker(env: Record<string, string>): Promise<RunningWorker> {
  const infra = await openInfra(loadConfig('worker', env), env.MONGODB_URI!, { logDestination: discard });
  const worker = buildWorker(infra);
  await worker.start();
  return {
    infra,
    worker,
    async stop() {
      await worker.stop();
      await infra.close();
    },
  };
}

export interface RunningRedirect {
  url: string;
  infra: Infra;
  redirect: RedirectService;
  stop(): Promise<void>;
}

/** The redirect composition root in this process, on a real socket (REDIRECT_PORT from the env, or ephemeral). */
export async function startRedirect(env: Record<string, string>, logDestination: NodeJS.WritableStream = discard): Promise<RunningRedirect> {
  const infra = await openInfra(loadConfig('redirect', env), env.MONGODB_URI!, { logDestination });
  const redirect = buildRedirect(infra);
  await redirect.start();
  return {
    url: `http://127.0.0.1:${redirect.port()}`,
    infra,
    redirect,
    async stop() {
      await redirect.stop();
      await infra.close();
    },
  };
}
