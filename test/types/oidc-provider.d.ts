// The part of oidc-provider (panva; ships no types) the OpenID Connect tests use to run a real provider.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface Grant {
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }

  interface KoaLikeContext {
    path: string;
    req: IncomingMessage;
    res: ServerResponse;
    respond?: boolean;
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    proxy: boolean;
    Grant: new (input: { accountId: string; clientId: string }) => Grant;
    use(middleware: (ctx: KoaLikeContext, next: () => Promise<void>) => Promise<void> | void): void;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionFinished(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<void>;
  }
}
