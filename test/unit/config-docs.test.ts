import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { loadConfig } from '../../src/config/config.ts';
import { loadOperatorConfig } from '../../src/config/operator.ts';
import { ENV_VARIABLES } from '../../src/config/variables.ts';
import { generatePage, observedDefaults } from '../../scripts/config-docs.ts';

const PAGE = new URL('../../docs/configuration.md', import.meta.url);
const SOURCES = ['../../src/config/config.ts', '../../src/config/link-safety.ts', '../../src/config/operator.ts'];

/** The variables the loaders read: every name they ask an env for, plus every variable name quoted in their source
 * (a variable read only when another is set, such as OIDC_CLIENT_SECRET, is not asked for by an empty env). */
function variablesRead(): string[] {
  const asked = new Set<string>();
  const env = new Proxy<Record<string, string | undefined>>({}, {
    get: (_target, name) => {
      if (typeof name === 'string') asked.add(name);
      return undefined;
    },
  });
  for (const process of ['api', 'redirect', 'worker', 'all-in-one'] as const) {
    try {
      loadConfig(process, env);
    } catch { /* required variables are missing: only the names asked matter here */ }
  }
  try {
    loadOperatorConfig(env);
  } catch { /* as above */ }
  for (const source of SOURCES) {
    const text = readFileSync(new URL(source, import.meta.url), 'utf8');
    for (const [, name] of text.matchAll(/'([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)'/g)) asked.add(name!);
  }
  return [...asked].sort();
}

describe('configuration reference (docs/configuration.md)', () => {
  it('names every environment variable the processes and the operator read', () => {
    const page = readFileSync(PAGE, 'utf8');
    const variables = variablesRead();
    expect(variables).to.include.members(['MONGODB_URI', 'NODE_ENV', 'OIDC_CLIENT_SECRET', 'POD_NAME', 'KUBERNETES_SERVICE_HOST']);
    expect(variables.filter((name) => !page.includes(`\`${name}\``))).to.deep.equal([]);
  });

  it('is written from the schema: every variable read is in src/config/variables.ts, and every one there is read', () => {
    const rows = Object.values(ENV_VARIABLES).flat();
    const listed = new Set(rows.flatMap((row) => row.names));
    // A variable that only steers another's default (KUBERNETES_SERVICE_HOST) is named in that default's words.
    const named = new Set(rows.flatMap((row) => [...`${row.default ?? ''} ${row.meaning}`.matchAll(/`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)`/g)].map((m) => m[1]!)));
    const read = variablesRead();
    expect(read.filter((name) => !listed.has(name) && !named.has(name)), 'read but not in the schema').to.deep.equal([]);
    expect([...listed].filter((name) => !read.includes(name)), 'in the schema but read by no loader').to.deep.equal([]);
  });

  it('shows the defaults the loaders apply, taken from them (the loaders tell each default as they read it)', () => {
    const seen = observedDefaults();
    expect(seen.get('RATE_LIMIT_WORKSPACE_PER_MIN')?.get('api')).to.equal('600');
    expect(seen.get('HOST')?.get('all-in-one')).to.equal('127.0.0.1');
    expect(seen.get('LEASE_DURATION_MS')?.get('operator')).to.equal('15000');
  });

  it('is exactly what scripts/config-docs.ts writes (run `npm run docs:config` after changing a variable)', () => {
    const page = readFileSync(PAGE, 'utf8');
    expect(generatePage(page) === page, 'docs/configuration.md differs from the generated tables').to.equal(true);
  });
});
