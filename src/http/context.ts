import type { ParameterizedContext, DefaultContext } from 'koa';
import type { Principal, SignedIn } from '../tenancy/principal.ts';

export interface ApiState {
  requestId: string;
  principal?: Principal;
  /** The dashboard session of an /auth/* request, when its cookie names a usable one. */
  signedIn?: SignedIn;
  rawBody?: Buffer;
}

export type ApiContext = ParameterizedContext<ApiState, DefaultContext & { params: Record<string, string> }>;
