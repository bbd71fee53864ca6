import type { DecisionTrace } from '../visitor/click-record.ts';

/**
 * What the decision engine concludes for one request (DESIGN, redirect decision order). The HTTP layer turns an
 * outcome into a response; the click record keeps the `trace`.
 */
export type Outcome =
  | { kind: 'redirect'; url: string; status: 301 | 302 | 307 | 308; trace: DecisionTrace }
  /** 404 looks exactly like an unknown slug; 410 says removed permanently. */
  | { kind: 'block'; status: 404 | 410; trace: DecisionTrace }
  /** Expired without `expired_url`. */
  | { kind: 'gone'; trace: DecisionTrace }
  | { kind: 'password'; trace: DecisionTrace }
  | { kind: 'warn'; trace: DecisionTrace }
  | {
      kind: 'page';
      title: string | null;
      text: string | null;
      buttonLabel: string | null;
      /** Where the button goes; null: it continues to the link (like warn's continue). */
      buttonUrl: string | null;
      trace: DecisionTrace;
    }
  | {
      kind: 'app';
      /** The deep link to try first. */
      appUrl: string;
      /** Where the page goes after `delayMs` if the app did not open (store or web). */
      fallbackUrl: string;
      delayMs: number;
      platform: 'ios' | 'android';
      trace: DecisionTrace;
    };
