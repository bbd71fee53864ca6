import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { until } from './wait.ts';

export interface Mail {
  to: string[];
  /** The raw message with quoted-printable soft line breaks removed. */
  raw: string;
}

/** A real SMTP server on an ephemeral port that keeps every message it receives. */
export class Inbox {
  readonly mails: Mail[] = [];
  private readonly server: SMTPServer;
  url = '';

  constructor() {
    this.server = new SMTPServer({
      secure: false,
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          this.mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8').replace(/=\r?\n/g, '').replace(/=3D/g, '=') });
          callback();
        });
      },
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `smtp://127.0.0.1:${(this.server.server.address() as AddressInfo).port}`;
    return this;
  }

  /** The first message to `address` whose text matches `pattern`, waiting for it to arrive. */
  async waitFor(address: string, pattern: RegExp): Promise<RegExpMatchArray> {
    let found: RegExpMatchArray | null = null;
    await until(() => {
      for (const mail of this.mails) {
        if (!mail.to.includes(address)) continue;
        found = pattern.exec(mail.raw);
        if (found) return true;
      }
      return false;
    }, 10_000, `a mail to ${address} matching ${pattern}`);
    return found!;
  }

  to(address: string): Mail[] {
    return this.mails.filter((m) => m.to.includes(address));
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
