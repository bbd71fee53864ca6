import assert from 'node:assert/strict';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import { CHART, RELEASE, configOf, helm, one, render, validate, WITH_SECRET_KEY } from '../helpers/chart.ts';

describe('Helm chart: dashboard sign-in settings', function () {
  this.timeout(60_000);

  it('leaves OpenID Connect off by default', async () => {
    const objects = await render();
    const data = configOf(objects).data ?? {};
    assert.deepEqual(Object.keys(data).filter((k) => k.startsWith('OIDC_')), []);
    const env = one<IDeployment>(objects, 'Deployment', 'api').spec!.template.spec!.containers[0]!.env ?? [];
    assert.equal(env.some((e) => e.name === 'OIDC_CLIENT_SECRET'), false);
  });

  it('passes the provider to every process, its client secret through the Secret', async () => {
    const objects = await render(
      '--set', 'dashboard.oidc.issuer=https://login.example.com/realms/acme',
      '--set', 'dashboard.oidc.clientId=linkplane',
      '--set', 'dashboard.oidc.name=Acme SSO',
      '--set', 'dashboard.oidc.clientSecret=s3cret-value',
    );
    for (const object of objects) validate(object);
    assert.partialDeepStrictEqual(configOf(objects).data, { OIDC_ISSUER: 'https://login.example.com/realms/acme', OIDC_CLIENT_ID: 'linkplane', OIDC_NAME: 'Acme SSO' });
    assert.equal(configOf(objects).data?.OIDC_CLIENT_SECRET, undefined);
    const secret = objects.find((o) => o.kind === 'Secret') as ISecret;
    assert.equal(Buffer.from(secret.data!.OIDC_CLIENT_SECRET!, 'base64').toString('utf8'), 's3cret-value');
    const env = one<IDeployment>(objects, 'Deployment', 'api').spec!.template.spec!.containers[0]!.env ?? [];
    const entry = env.find((e) => e.name === 'OIDC_CLIENT_SECRET');
    assert.deepEqual(entry?.valueFrom?.secretKeyRef, { name: `${RELEASE}-linkplane`, key: 'OIDC_CLIENT_SECRET', optional: true });
  });

  it('refuses an issuer without a client id', async () => {
    const result = await helm('template', RELEASE, CHART, ...WITH_SECRET_KEY, '--set', 'dashboard.oidc.issuer=https://login.example.com');
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /dashboard\.oidc\.clientId is required/);
  });
});
