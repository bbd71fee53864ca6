// TCP side: one FrameReader per connection, commands run synchronously in arrival order. A
// message that cannot be parsed (or a reply that cannot be encoded) closes only its connection.
// With a journal, replies wait for the end of the event-loop turn: the writes of every command run
// in that turn are committed to the journal together (group commit), then the replies go out.
import net from 'node:net';
import { Blocked, runCommand, type ServerState } from './commands/index.ts';
import type { Transaction } from './transactions.ts';
import { encodeMsg, encodeReply, FrameReader, MORE_TO_COME, parseMessage, ReplySlabs } from './wire.ts';

export type Logger = (msg: string, fields?: Record<string, unknown>) => void;

/**
 * A connection's messages not yet run, in order. While a write waits for a transaction (commands/wait.ts), it and
 * every later message of its connection wait with it, as the driver expects one connection's replies in order.
 */
interface Connection {
  readonly socket: net.Socket;
  readonly id: number;
  readonly queue: Buffer[];
  waiting: boolean;
}

export class WireServer {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private readonly state: ServerState;
  private readonly log: Logger;
  private nextConnectionId = 1;
  private readonly commit: (() => void) | undefined;
  private replies: Array<[net.Socket, Buffer]> = [];
  private flushScheduled = false;
  private readonly slabs = new ReplySlabs();

  constructor(state: ServerState, log: Logger, commit?: () => void) {
    this.state = state;
    this.log = log;
    this.commit = commit;
    this.server = net.createServer((socket) => this.accept(socket));
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve((this.server.address() as net.AddressInfo).port);
      });
    });
  }

  private accept(socket: net.Socket): void {
    // Without it Nagle's algorithm delays small replies and halves throughput.
    socket.setNoDelay(true);
    const connectionId = this.nextConnectionId++;
    this.sockets.add(socket);
    this.state.connections.current++;
    this.state.connections.total++;
    const reader = new FrameReader();
    const conn: Connection = { socket, id: connectionId, queue: [], waiting: false };
    socket.on('data', (chunk: Buffer) => {
      try {
        for (const frame of reader.push(chunk)) conn.queue.push(frame);
      } catch (err) {
        this.log('devdb: closing connection after a malformed message', { connectionId, error: err instanceof Error ? err.message : String(err) });
        socket.destroy();
        return;
      }
      this.drain(conn);
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      this.sockets.delete(socket);
      this.state.connections.current--;
    });
  }

  /** Runs the connection's messages in order until one has to wait for a transaction. */
  private drain(conn: Connection): void {
    while (!conn.waiting && conn.queue.length > 0 && !conn.socket.destroyed) {
      const frame = conn.queue[0]!;
      let blocked: Blocked | undefined;
      try {
        blocked = this.handle(conn.socket, frame, conn.id);
      } catch (err) {
        this.log('devdb: closing connection after a malformed message', { connectionId: conn.id, error: err instanceof Error ? err.message : String(err) });
        conn.socket.destroy();
        return;
      }
      if (blocked) this.wait(conn, blocked.txn);
      else conn.queue.shift();
    }
  }

  /** Runs the connection's messages again once `txn` has ended, or has outlived its lifetime (then it is aborted). */
  private wait(conn: Connection, txn: Transaction): void {
    conn.waiting = true;
    const resume = () => {
      if (!conn.waiting) return;
      conn.waiting = false;
      clearTimeout(timer);
      this.drain(conn);
    };
    const timer = setTimeout(
      () => {
        if (txn.state === 'active' && txn.expired()) txn.abort();
        resume();
      },
      Math.max(0, txn.expiresAt() - Date.now()) + 5,
    );
    // A waiting connection does not keep a stopping process alive.
    timer.unref();
    txn.whenEnded(resume);
  }

  private handle(socket: net.Socket, frame: Buffer, connectionId: number): Blocked | undefined {
    const req = parseMessage(frame);
    if (req.kind === 'query') {
      const db = req.collection.split('.')[0] ?? 'admin';
      const reply = runCommand(this.state, req.command, connectionId, db);
      if (reply instanceof Blocked) return reply;
      this.send(socket, encodeReply(req.requestId, reply, this.slabs));
      return undefined;
    }
    const reply = runCommand(this.state, req.command, connectionId);
    if (reply instanceof Blocked) return reply;
    // moreToCome: an unacknowledged write, the client expects no answer.
    if ((req.flags & MORE_TO_COME) === 0) this.send(socket, encodeMsg(req.requestId, reply, this.slabs));
    else this.scheduleFlush();
    return undefined;
  }

  private send(socket: net.Socket, reply: Buffer): void {
    if (!this.commit) {
      this.write(socket, reply);
      return;
    }
    this.replies.push([socket, reply]);
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (!this.commit || this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  /** Commits the turn's writes, then acknowledges them; a failed commit acknowledges nothing. */
  private flush(): void {
    this.flushScheduled = false;
    const replies = this.replies;
    this.replies = [];
    try {
      this.commit!();
    } catch (err) {
      this.log('devdb: journal write failed, closing the connections waiting for it', { error: err instanceof Error ? err.message : String(err) });
      for (const [socket] of replies) socket.destroy();
      return;
    }
    for (const [socket, reply] of replies) if (!socket.destroyed) this.write(socket, reply);
  }

  /** The reply's buffer is used again once the socket has written it; after a failed write it is left alone. */
  private write(socket: net.Socket, reply: Buffer): void {
    socket.write(reply, (err) => {
      if (!err) this.slabs.give(reply);
    });
  }

  close(): Promise<void> {
    if (this.commit && this.replies.length > 0) this.flush();
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
