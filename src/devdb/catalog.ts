// Databases and their collections. Every change is reported to the listener as one operation
// (the persistence journal appends exactly these).
import { Collection, type CollectionChange } from './collection.ts';
import { CommandError } from './errors.ts';

export type Change =
  | { kind: 'create'; db: string; coll: string; uuid: Collection['uuid'] }
  | { kind: 'drop'; db: string; coll: string }
  | ({ db: string; coll: string } & CollectionChange);

export type ChangeListener = (change: Change) => void;

export class Catalog {
  private readonly dbs = new Map<string, Map<string, Collection>>();
  private readonly listener: ChangeListener;

  constructor(listener: ChangeListener = () => {}) {
    this.listener = listener;
  }

  databaseNames(): string[] {
    return [...this.dbs.entries()].filter(([, colls]) => colls.size > 0).map(([name]) => name);
  }

  collections(db: string): Collection[] {
    return [...(this.dbs.get(db)?.values() ?? [])];
  }

  get(db: string, name: string): Collection | undefined {
    return this.dbs.get(db)?.get(name);
  }

  getOrCreate(db: string, name: string): Collection {
    return this.get(db, name) ?? this.create(db, name);
  }

  create(db: string, name: string, uuid?: Collection['uuid']): Collection {
    if (!name || name.includes('$') || name.startsWith('system.')) {
      throw new CommandError('BadValue', `Invalid collection name: ${name}`);
    }
    let colls = this.dbs.get(db);
    if (!colls) {
      colls = new Map();
      this.dbs.set(db, colls);
    }
    const coll = new Collection(db, name, (change) => this.listener({ db, coll: name, ...change }), uuid);
    colls.set(name, coll);
    this.listener({ kind: 'create', db, coll: name, uuid: coll.uuid });
    return coll;
  }

  drop(db: string, name: string): Collection | undefined {
    const coll = this.get(db, name);
    if (!coll) return undefined;
    this.dbs.get(db)!.delete(name);
    this.listener({ kind: 'drop', db, coll: name });
    return coll;
  }

  dropDatabase(db: string): void {
    for (const coll of this.collections(db)) this.drop(db, coll.name);
    this.dbs.delete(db);
  }

  all(): Collection[] {
    return [...this.dbs.values()].flatMap((colls) => [...colls.values()]);
  }
}
