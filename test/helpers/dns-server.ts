// A DNS server for tests (DESIGN: "a real DNS server on loopback (npm dns2)"), shared by the operator tests and
// the custom-domain end-to-end test.
import dns2 from 'dns2';
import { freePort } from './processes.ts';

export interface ZoneEntry {
  TXT?: string[];
  CNAME?: string;
  A?: string[];
  /** The A records of every answer after the first: a name that changes its answer (DNS rebinding). */
  thenA?: string[];
}

/** A real DNS server on loopback (UDP and TCP) whose zone a test sets: what a customer's DNS provider would answer. */
export class TestDns {
  readonly zone = new Map<string, ZoneEntry>();
  readonly queries: string[] = [];
  /** A questions answered, per name. */
  readonly aAnswers = new Map<string, number>();
  private readonly server: ReturnType<typeof dns2.createServer>;
  readonly port: number;

  private constructor(port: number) {
    this.port = port;
    const { Packet } = dns2;
    this.server = dns2.createServer({
      udp: true,
      tcp: true,
      handle: (request, send) => {
        const response = Packet.createResponseFromRequest(request);
        for (const question of request.questions) {
          const name = question.name.toLowerCase();
          this.queries.push(name);
          const entry = this.zone.get(name) ?? {};
          const answer = (record: { type: number; data?: string; domain?: string; address?: string }): void => {
            response.answers.push(Packet.createResourceFromQuestion(question, { class: Packet.CLASS.IN, ttl: 1, ...record }));
          };
          if (question.type === Packet.TYPE.TXT) for (const data of entry.TXT ?? []) answer({ type: Packet.TYPE.TXT, data });
          if (question.type === Packet.TYPE.CNAME && entry.CNAME) answer({ type: Packet.TYPE.CNAME, domain: entry.CNAME });
          if (question.type === Packet.TYPE.A) {
            const answered = this.aAnswers.get(name) ?? 0;
            this.aAnswers.set(name, answered + 1);
            for (const address of (answered > 0 ? entry.thenA : undefined) ?? entry.A ?? []) answer({ type: Packet.TYPE.A, address });
          }
        }
        void send(response);
      },
    });
  }

  static async start(): Promise<TestDns> {
    const dns = new TestDns(await freePort());
    await dns.server.listen({ udp: { port: dns.port, address: '127.0.0.1' }, tcp: { port: dns.port, address: '127.0.0.1' } });
    return dns;
  }

  /** The records a customer sets: the TXT token and a CNAME to our ingress. */
  pointAtUs(hostname: string, token: string, cnameTarget: string): void {
    this.zone.set(`_linkplane.${hostname}`, { TXT: [`linkplane-verify=${token}`] });
    this.zone.set(hostname, { CNAME: cnameTarget });
  }

  stop(): Promise<void> {
    return this.server.close();
  }
}

