import { expect } from 'chai';
import { connect } from 'node:net';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { freePort, spawnProcess, waitForHttp } from '../helpers/processes.ts';
import { Tenants } from '../helpers/tenants.ts';

describe('graceful shutdown on SIGTERM', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let tenants: Tenants;

  before(async () => {
    mongo = await startTestMongo();
    tenants = await Tenants.open(mongo);
  });
  after(async () => {
    await tenants.close();
    await mongo.stop();
  });

  it('stops accepting, finishes the request in flight, then exits 0', async () => {
    const { key } = await tenants.aPartnerKey(await tenants.aPartner());
    const port = await freePort();
    const proc = spawnProcess('api', testEnv(mongo, { API_PORT: String(port) }));
    await waitForHttp(`http://127.0.0.1:${port}/readyz`, proc);

    // A request whose body is still arriving when the signal comes.
    const body = JSON.stringify({ name: 'In flight' });
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let response = '';
    socket.on('data', (d: Buffer) => (response += d.toString()));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write(
      `POST /v1/partner/clients HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`,
    );
    await new Promise((r) => setTimeout(r, 200));

    proc.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    const refused = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      () => false,
      () => true,
    );
    expect(refused, 'a new connection after SIGTERM is refused').to.equal(true);

    socket.write(body.slice(5));
    await closed;
    expect(response, proc.output()).to.match(/^HTTP\/1\.1 201 /);
    expect(response).to.contain('"name":"In flight"');
    expect(await proc.exited).to.equal(0);
  });

  it('finishes a request whose client half-closed its socket before closing the database', async () => {
    const partnerId = await tenants.aPartner();
    const { key } = await tenants.aPartnerKey(partnerId);
    const port = await freePort();
    const proc = spawnProcess('api', testEnv(mongo, { API_PORT: String(port), LOG_LEVEL: 'error' }));
    await waitForHttp(`http://127.0.0.1:${port}/readyz`, proc);
    const body = JSON.stringify({ name: 'Half closed' });
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.on('error', () => undefined);
    socket.write(
      `POST /v1/partner/clients HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    await new Promise((r) => setTimeout(r, 200));
    proc.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    socket.end(body.slice(5));
    expect(await proc.exited).to.equal(0);
    expect(proc.output(), 'no request failed on a closed database').not.to.contain('unexpected error');
    expect(await tenants.workspaces.collection.countDocuments({ partner_id: partnerId, name: 'Half closed' })).to.equal(1);
  });
});
