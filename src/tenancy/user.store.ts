import type { Collection, Db } from 'mongodb';
import { ConflictError, isDuplicateKey } from '../platform/errors.ts';

export interface UserDoc {
  _id: string;
  /** Lower-cased: the address is how a person is found (sign-in, invites, OpenID Connect), whatever its case. */
  email: string;
  name: string;
  /** `scrypt$N$r$p$salt$hash`; null for an account that signs in only by link or OpenID Connect. */
  password_hash: string | null;
  created_at: Date;
  updated_at: Date;
}

export class EmailTakenError extends ConflictError {
  readonly email: string;
  constructor(email: string, cause?: unknown) {
    super(`A user with the e-mail ${email} already exists.`, { cause });
    this.email = email;
  }
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export class UserStore {
  readonly collection: Collection<UserDoc>;
  constructor(db: Db) {
    this.collection = db.collection<UserDoc>('users');
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([{ key: { email: 1 }, name: 'email_unique', unique: true }]);
  }

  async insert(doc: UserDoc): Promise<void> {
    try {
      await this.collection.insertOne(doc);
    } catch (error) {
      if (isDuplicateKey(error)) throw new EmailTakenError(doc.email, error);
      throw error;
    }
  }

  findById(id: string): Promise<UserDoc | null> {
    return this.collection.findOne({ _id: id });
  }

  findByEmail(email: string): Promise<UserDoc | null> {
    return this.collection.findOne({ email: normalizeEmail(email) });
  }

  findByIds(ids: readonly string[]): Promise<UserDoc[]> {
    return this.collection.find({ _id: { $in: [...ids] } }).toArray();
  }

  async setPassword(id: string, passwordHash: string, at: Date): Promise<void> {
    await this.collection.updateOne({ _id: id }, { $set: { password_hash: passwordHash, updated_at: at } });
  }
}
