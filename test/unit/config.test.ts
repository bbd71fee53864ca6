import { expect } from 'chai';
import { totalmem } from 'node:os';
import { ConfigError, defaultDevdbHeapMb, loadConfig } from '../../src/config/config.ts';

describe('config', () => {
  it('names every bad variable at once', () => {
    let error: unknown;
    try {
      loadConfig('api', { API_PORT: '99999', LOG_LEVEL: 'chatty', NATS_URL: 'http://x', RATE_LIMIT_WORKSPACE_PER_MIN: 'many' });
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of ['API_PORT', 'LOG_LEVEL', 'NATS_URL', 'RATE_LIMIT_WORKSPACE_PER_MIN', 'MONGODB_URI', 'SECRET_KEY']) {
      expect(problems).to.contain(name);
    }
  });

  it('gives all-in-one working defaults without any variable', () => {
    const config = loadConfig('all-in-one', {});
    expect(config).to.deep.include({ apiPort: 8080, redirectPort: 8081, host: '127.0.0.1', env: 'development' });
    expect(config.mongo.uri).to.equal(null);
    expect(config.devdb.dataDir).to.equal('.data/devdb');
    expect(config.devdb.youngGenerationMb).to.equal(256);
    expect(loadConfig('all-in-one', { DEVDB_YOUNG_GENERATION_MB: '64' }).devdb.youngGenerationMb).to.equal(64);
    expect(() => loadConfig('all-in-one', { DEVDB_YOUNG_GENERATION_MB: '4' })).to.throw(ConfigError, /DEVDB_YOUNG_GENERATION_MB/);
    expect(config.nats.url).to.equal('nats://127.0.0.1:4222');
    expect(config.rateLimit).to.deep.equal({ workspacePerMinute: 600, partnerPerMinute: 1200 });
    expect(config.docsBaseUrl).to.equal('http://localhost:8080/docs');
  });

  it("lets devdb's heap grow to three quarters of the memory the process may use, not V8's 4 GB", () => {
    const mb = totalmem() / 1_048_576;
    const heapMb = loadConfig('all-in-one', {}).devdb.heapMb;
    expect(heapMb).to.equal(defaultDevdbHeapMb());
    // This machine runs the suite unconstrained (or under a cgroup limit, which may only lower it).
    expect(heapMb).to.be.at.most(Math.floor(mb * 0.75)).and.at.least(256);
    expect(loadConfig('all-in-one', { DEVDB_HEAP_MB: '2048' }).devdb.heapMb).to.equal(2048);
    expect(() => loadConfig('all-in-one', { DEVDB_HEAP_MB: '100' })).to.throw(ConfigError, /DEVDB_HEAP_MB/);
  });

  it('is frozen', () => {
    const config = loadConfig('all-in-one', {});
    expect(Object.isFrozen(config) && Object.isFrozen(config.mongo)).to.equal(true);
  });

  it('requires a real secret in production', () => {
    expect(() => loadConfig('api', { MONGODB_URI: 'mongodb://db', SECRET_KEY: 'short' })).to.throw(ConfigError, /SECRET_KEY/);
    expect(loadConfig('api', { MONGODB_URI: 'mongodb://db', SECRET_KEY: 'k'.repeat(32) }).env).to.equal('production');
  });
});
