// CLI: node src/devdb/main.ts [--port N] [--data DIR]
import { parseArgs } from 'node:util';
import { startDevDb } from './index.ts';

const { values } = parseArgs({ options: { port: { type: 'string' }, data: { type: 'string' }, host: { type: 'string' } } });
const db = await startDevDb({
  host: values.host,
  port: values.port === undefined ? 27017 : Number(values.port),
  dataDir: values.data,
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
