import { createHmac } from 'node:crypto';
import type { Collection, Db } from 'mongodb';

interface AttemptDoc {
  _id: string;
  count: number;
  expires_at: Date;
}

/**
 * Wrong passwords per visitor and link in a fixed window, kept in MongoDB so every redirect replica sees the same
 * count (a password POST is rare next to redirects; the database round trip is affordable there). The visitor is
 * its IP address, keyed-hashed: a cookie would be dropped by exactly the clients worth limiting.
 */
export class PasswordAttempts {
  private readonly collection: Collection<AttemptDoc>;
  private readonly max: number;
  private readonly windowMs: number;
  private readonly key: string;

  constructor(db: Db, options: { maxAttempts: number; windowMs: number; secretKey: string }) {
    this.collection = db.collection<AttemptDoc>('password_attempts');
    this.max = options.maxAttempts;
    this.windowMs = options.windowMs;
    this.key = options.secretKey;
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([{ key: { expires_at: 1 }, name: 'ttl', expireAfterSeconds: 0 }]);
  }

  private id(linkId: string, visitor: string): string {
    return `${linkId}:${createHmac('sha256', this.key).update(visitor).digest('base64url').slice(0, 22)}`;
  }

  /**
   * Takes one attempt of the visitor's window before the password is checked, atomically: concurrent guesses each
   * take their own, so no more than `maxAttempts` are ever checked per window. Answers the seconds until the visitor
   * may try again when the window is used up (the attempt is then refused, not checked), or 0 when it may go ahead.
   */
  async reserve(linkId: string, visitor: string, now = Date.now()): Promise<number> {
    const _id = this.id(linkId, visitor);
    // A window that has run out starts again (the TTL monitor removes it only about once a minute).
    await this.collection.deleteOne({ _id, expires_at: { $lte: new Date(now) } });
    const take = () =>
      this.collection.findOneAndUpdate(
        { _id },
        { $inc: { count: 1 }, $setOnInsert: { expires_at: new Date(now + this.windowMs) } },
        { upsert: true, returnDocument: 'after' },
      );
    let doc: AttemptDoc | null;
    try {
      doc = await take();
    } catch (error) {
      // Two first attempts upserting at once: one inserts, the other meets its key and updates on a second try.
      if ((error as { code?: unknown }).code !== 11000) throw error;
      doc = await take();
    }
    if (!doc || doc.count <= this.max) return 0;
    return Math.max(1, Math.ceil((doc.expires_at.getTime() - now) / 1000));
  }

  /** A correct password clears the count. */
  async succeed(linkId: string, visitor: string): Promise<void> {
    await this.collection.deleteOne({ _id: this.id(linkId, visitor) });
  }
}

/**
 * Password checks running at once in this process, bounded per link and per visitor: each is a scrypt derivation
 * (tens of milliseconds of CPU), so a burst of guesses must not queue thousands of them. A check over either bound
 * is refused at once, before its attempt is counted.
 */
export class VerificationSlots {
  private readonly perLink: number;
  private readonly perVisitor: number;
  private readonly links = new Map<string, number>();
  private readonly visitors = new Map<string, number>();

  constructor(options: { perLink: number; perVisitor: number }) {
    this.perLink = options.perLink;
    this.perVisitor = options.perVisitor;
  }

  /** A release function, or null when the link or the visitor already has its share of checks running. */
  acquire(linkId: string, visitor: string): (() => void) | null {
    const link = this.links.get(linkId) ?? 0;
    const mine = this.visitors.get(visitor) ?? 0;
    if (link >= this.perLink || mine >= this.perVisitor) return null;
    this.links.set(linkId, link + 1);
    this.visitors.set(visitor, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      decrement(this.links, linkId);
      decrement(this.visitors, visitor);
    };
  }
}

function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left <= 0) counts.delete(key);
  else counts.set(key, left);
}
