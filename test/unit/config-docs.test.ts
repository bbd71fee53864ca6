import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { loadConfig } from '../../src/config/config.ts';
import { loadOperatorConfig } from '../../src/config/operator.ts';

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
});
