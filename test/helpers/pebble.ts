// Pebble, Let's Encrypt's ACME test server (Debian package `pebble`), started for one test on loopback with its own
// configuration: challenges really validated (PEBBLE_VA_ALWAYS_VALID=0) without its random sleeps, HTTP-01 asked of
// the port our redirect listens on, names resolved by the test's DNS server. Its HTTPS listener gets a throw-away
// certificate made here (openssl); its issuing root, regenerated at every start, is read from its management API.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accepts, freePort } from './processes.ts';

export interface Pebble {
  directoryUrl: string;
  /** The PEM file that makes Pebble's own HTTPS listener trusted (ACME_CA_FILE). */
  caFile: string;
  /** The root that issued the certificates (Pebble's minica root of this run), PEM. */
  root(): Promise<string>;
  output(): string;
  stop(): Promise<void>;
}

export interface PebbleOptions {
  /** Where Pebble makes its HTTP-01 requests (our redirect's plain HTTP port). */
  httpPort: number;
  /** The DNS server Pebble resolves names with (`127.0.0.1:port`). */
  dnsServer: string;
  /** Lifetime of the certificates it issues, in seconds (Pebble's certificateValidityPeriod). */
  certificateValiditySeconds?: number;
}

export async function startPebble(options: PebbleOptions): Promise<Pebble> {
  const dir = mkdtempSync(join(tmpdir(), 'pebble-'));
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
    '-subj', '/CN=pebble.localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
    '-keyout', keyFile, '-out', certFile,
  ], { stdio: 'ignore' });
  const [acmePort, managementPort, tlsPort] = [await freePort(), await freePort(), await freePort()];
  const configFile = join(dir, 'pebble-config.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${acmePort}`,
        managementListenAddress: `127.0.0.1:${managementPort}`,
        certificate: certFile,
        privateKey: keyFile,
        httpPort: options.httpPort,
        tlsPort,
        ocspResponderURL: '',
        externalAccountBindingRequired: false,
        ...(options.certificateValiditySeconds ? { certificateValidityPeriod: options.certificateValiditySeconds } : {}),
      },
    }),
  );
  const child: ChildProcess = spawn('pebble', ['-config', configFile, '-dnsserver', options.dnsServer, '-strict=false'], {
    env: {
      ...process.env,
      PEBBLE_VA_NOSLEEP: '1',
      PEBBLE_VA_ALWAYS_VALID: '0',
      // Every order validates afresh (a renewal proves control again), and no nonce is refused at random.
      PEBBLE_AUTHZREUSE: '0',
      PEBBLE_WFE_NONCEREJECT: '0',
    },
    stdio: 'pipe',
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 20_000;
  while (!(await accepts(acmePort)) || !(await accepts(managementPort))) {
    if (child.exitCode !== null) throw new Error(`pebble exited:\n${output}`);
    if (Date.now() > deadline) throw new Error(`pebble did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const ca = readFileSync(certFile, 'utf8');
  return {
    directoryUrl: `https://127.0.0.1:${acmePort}/dir`,
    caFile: certFile,
    output: () => output,
    root: () =>
      new Promise<string>((resolve, reject) => {
        request(`https://127.0.0.1:${managementPort}/roots/0`, { ca }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`pebble /roots/0 answered ${res.statusCode}`))));
        })
          .on('error', reject)
          .end();
      }),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
