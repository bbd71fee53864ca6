import type { ParameterizedContext, DefaultContext } from 'koa';
import type { Principal } from '../keys/key.service.ts';

export interface ApiState {
  requestId: string;
  principal?: Principal;
  rawBody?: Buffer;
}

export type ApiContext = ParameterizedContext<ApiState, DefaultContext & { params: Record<string, string> }>;
