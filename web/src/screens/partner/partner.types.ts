// The shapes the /v1/partner endpoints answer (src/partner/*.schemas.ts). Money is in integer minor units.

export interface Limits {
  links: number;
  domains: number;
  tracked_clicks_per_month: number;
  rate_limit_per_minute: number;
}

export interface PartnerProfile {
  id: string;
  name: string;
  platform_plan: { id: string; limits: Limits; capabilities: string[] };
  clients: { count: number; quota: number };
  platform_fee_bps: number;
  suspended_links: 'redirect' | 'suspended_page';
  grace_period_days: number;
  processor_fee: { percent_bps: number; fixed: number };
  billing: { stripe_ingestion_url: string; stripe_endpoint_secret_set: boolean };
  created_at: string;
}

export type ClientState = 'pending' | 'subscribed' | 'past_due' | 'suspended' | 'canceled';

export interface Client {
  id: string;
  name: string;
  plan: string | null;
  /** The platform plan of the workspace: what applies when `plan` is null. */
  platform_plan: { id: string; name: string };
  status: ClientState;
  subscription: { state: ClientState; changed_at: string; past_due_since: string | null; suspended_reason: string | null; external_subscription_id: string | null };
  billing_customer_id: string | null;
  metadata: Record<string, string>;
  created_at: string;
}

export interface Plan {
  id: string;
  name: string;
  status: 'active' | 'archived';
  price: { amount: number; currency: string; interval: 'month' | 'year' };
  limits: Limits;
  capabilities: string[];
  external_price_id: string | null;
  clients: number;
  created_at: string;
  updated_at: string;
}

export interface Payment {
  id: string;
  status: 'succeeded' | 'partially_refunded' | 'refunded';
  client_id: string;
  plan_id: string | null;
  source: 'stripe' | 'manual';
  gross: number;
  processor_fee: number;
  platform_fee: number;
  partner_share: number;
  refunded: number;
  currency: string;
  period: string;
  paid_at: string;
  payout_id: string | null;
  external_ids: { reference: string | null };
  created_at: string;
}

export interface Payout {
  id: string;
  period: string;
  currency: string;
  status: 'pending' | 'paid';
  payments: number;
  gross: number;
  processor_fees: number;
  platform_fees: number;
  partner_shares: number;
  refunds: number;
  refunded_partner_shares: number;
  amount: number;
  reference: string | null;
  paid_at: string | null;
  created_at: string;
}
