// CLI: node src/devdb/main.ts [--port N] [--data DIR] [--fsync always|interval] [--compact-min-bytes N]
import { parseArgs } from 'node:util';
import { startDevDb } from './index.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    data: { type: 'string' },
    host: { type: 'string' },
    fsync: { type: 'string' },
    'compact-min-bytes': { type: 'string' },
  },
});
if (values.fsync !== undefined && values.fsync !== 'always' && values.fsync !== 'interval') {
  console.error(`--fsync must be 'always' or 'interval', not '${values.fsync}'`);
  process.exit(2);
}
const db = await startDevDb({
  host: values.host,
  port: values.port === undefined ? 27017 : Number(values.port),
  dataDir: values.data,
  journal: {
    ...(values.fsync ? { fsync: values.fsync } : {}),
    ...(values['compact-min-bytes'] ? { compactMinBytes: Number(values['compact-min-bytes']) } : {}),
  },
  log: (msg, fields) => console.error(msg, fields ?? ''),
});
console.log(db.uri);

let stopping = false;
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  db.stop().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
