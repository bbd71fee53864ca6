// `node operator/main.ts` as a real process: configuration from the environment, the kubeconfig file of the
// in-process API server, a DNS server on loopback, real NATS; SIGTERM releases the Lease and exits cleanly.
import { spawn } from 'node:child_process';
import { expect } from 'chai';
import dns2 from 'dns2';
import { startKubeApiServer, type KubeApiServer, type KubeObject } from '../helpers/kube-apiserver.ts';
import { NATS_URL, natsPrefix } from '../helpers/env.ts';
import { freePort, ROOT, waitForHttp } from '../helpers/processes.ts';

const NAMESPACE = 'linkplane';

function runOperator(env: Record<string, string>) {
  const child = spawn(process.execPath, ['operator/main.ts'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: 'pipe' });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

describe('operator process', function () {
  this.timeout(40_000);

  let kube: KubeApiServer;
  let dns: ReturnType<typeof dns2.createServer>;
  let dnsPort: number;
  const zone = new Map<string, { TXT?: string; CNAME?: string }>();

  before(async () => {
    kube = await startKubeApiServer();
    dnsPort = await freePort();
    const { Packet } = dns2;
    dns = dns2.createServer({
      udp: true,
      tcp: true,
      handle: (request, send) => {
        const response = Packet.createResponseFromRequest(request);
        for (const question of request.questions) {
          const entry = zone.get(question.name.toLowerCase());
          if (question.type === Packet.TYPE.TXT && entry?.TXT) response.answers.push(Packet.createResourceFromQuestion(question, { type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 1, data: entry.TXT }));
          if (question.type === Packet.TYPE.CNAME && entry?.CNAME) response.answers.push(Packet.createResourceFromQuestion(question, { type: Packet.TYPE.CNAME, class: Packet.CLASS.IN, ttl: 1, domain: entry.CNAME }));
        }
        void send(response);
      },
    });
    await dns.listen({ udp: { port: dnsPort, address: '127.0.0.1' }, tcp: { port: dnsPort, address: '127.0.0.1' } });
  });

  after(async () => {
    await dns.close();
    await kube.stop();
  });

  it('refuses to start on bad configuration, naming every bad variable', async () => {
    const run = runOperator({ DNS_CHECK_BACKOFF: 'often', LEASE_DURATION_MS: 'long' });
    expect(await run.exited).to.equal(2);
    for (const name of ['DNS_CHECK_BACKOFF', 'LEASE_DURATION_MS', 'INGRESS_SERVICE_NAME', 'POD_NAMESPACE', 'DOMAIN_CNAME_TARGET']) {
      expect(run.output()).to.contain(name);
    }
  });

  it('reconciles a Domain, serves metrics, and releases its lease on SIGTERM', async () => {
    const port = await freePort();
    const run = runOperator({
      POD_NAME: 'op-process',
      POD_NAMESPACE: NAMESPACE,
      KUBECONFIG: kube.kubeconfigFile(),
      NATS_URL,
      NATS_PREFIX: natsPrefix(),
      INGRESS_SERVICE_NAME: 'linkplane-redirect',
      DOMAIN_CNAME_TARGET: 'ingress.linkplane.test',
      DNS_RESOLVERS: `127.0.0.1:${dnsPort}`,
      DNS_CHECK_BACKOFF: '50ms',
      LEASE_DURATION_MS: '2000',
      LEASE_RENEW_MS: '200',
      OPERATOR_METRICS_PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
    });
    try {
      await waitForHttp(`http://127.0.0.1:${port}/readyz`, { child: run.child, output: run.output, exited: run.exited, stop: () => run.exited });
      zone.set('_linkplane.links.process.test', { TXT: 'linkplane-verify=tok' });
      zone.set('links.process.test', { CNAME: 'ingress.linkplane.test' });
      kube.create('Domain', {
        apiVersion: 'linkplane.io/v1alpha1',
        kind: 'Domain',
        metadata: { name: 'links.process.test', namespace: NAMESPACE },
        spec: { hostname: 'links.process.test', tenant: 'ws_p', domainId: 'dom_p', verificationToken: 'tok' },
      });
      const deadline = Date.now() + 15_000;
      const phase = (): unknown => kube.get<KubeObject & { status?: { phase?: string } }>('Domain', NAMESPACE, 'links.process.test')?.status?.phase;
      while (phase() !== 'PendingSSL' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(phase(), run.output()).to.equal('PendingSSL');
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(metrics).to.contain('linkplane_operator_leader 1');
      expect(metrics).to.contain('linkplane_operator_domains{phase="PendingSSL"} 1');
    } finally {
      run.child.kill('SIGTERM');
    }
    expect(await run.exited, run.output()).to.equal(0);
    const lease = kube.get<KubeObject & { spec: { holderIdentity?: string; leaseTransitions?: number } }>('Lease', NAMESPACE, 'linkplane-operator');
    expect(lease?.spec.holderIdentity).to.equal(undefined);
  });
});
