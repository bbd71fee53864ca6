// The shapes the conversions, alerts and reports APIs answer (src/conversions, src/alerts, src/reports schemas).

export interface Conversion {
  id: string;
  click_id: string;
  clicked_at: string;
  link_id: string;
  domain: string;
  slug: string;
  type: 'order' | 'signup' | 'custom';
  goal: string | null;
  amount: number | null;
  currency: string | null;
  external_id: string | null;
  customer_external_id: string | null;
  occurred_at: string;
  created_at: string;
  attribution: { variant_index: number | null; destination_id: string | null; country: string | null; device: string };
}

export const ALERT_TYPES = ['click_spike', 'click_drop', 'bot_share', 'rotator_unhealthy', 'webhook_failing', 'domain_error', 'tracked_clicks_share'] as const;
export type AlertType = (typeof ALERT_TYPES)[number];

/** Each condition in words, with what its threshold means (src/alerts/alert.schemas.ts ALERT_TYPE_DOCS). */
export const ALERT_TYPE_TEXT: Record<AlertType, { label: string; threshold: string; clicks: boolean }> = {
  click_spike: { label: 'Click spike', threshold: 'Times the usual clicks (more than 1)', clicks: true },
  click_drop: { label: 'Click drop', threshold: 'Share of the usual clicks (0.5: halved)', clicks: true },
  bot_share: { label: 'Bot share', threshold: 'Share of clicks by bots (0 to 1)', clicks: true },
  rotator_unhealthy: { label: 'Rotator destinations unhealthy', threshold: 'Unhealthy destinations (1: any)', clicks: false },
  webhook_failing: { label: 'Webhook endpoints failing', threshold: 'Failing endpoints (1: any)', clicks: false },
  domain_error: { label: 'Custom domains in error', threshold: 'Domains in error (1: any)', clicks: false },
  tracked_clicks_share: { label: 'Tracked clicks near the plan limit', threshold: 'Share of the monthly limit (0.8: 80 %)', clicks: false },
};

export interface AlertRule {
  id: string;
  name: string;
  type: AlertType;
  threshold: number;
  window_minutes: number;
  baseline_windows: number;
  cooldown_minutes: number;
  link_id: string | null;
  channels: { emails: string[]; webhook: boolean };
  enabled: boolean;
  created_at: string;
  updated_at: string;
}

export interface AlertFiring {
  id: string;
  rule_id: string;
  rule_name: string;
  type: AlertType;
  state: 'firing' | 'resolved';
  value: number;
  last_value: number;
  threshold: number;
  message: string;
  started_at: string;
  resolved_at: string | null;
  acknowledged_at: string | null;
}

export const REPORT_REASONS: Record<string, string> = {
  phishing: 'Phishing',
  malware: 'Malware',
  spam: 'Spam',
  scam: 'Scam',
  illegal: 'Illegal content',
  copyright: 'Copyright',
  other: 'Other',
};

export interface Report {
  id: string;
  link_id: string;
  short_url: string;
  destination: string;
  reason: string;
  details: string | null;
  reporter_contact: string | null;
  source: 'form' | 'api';
  status: 'open' | 'resolved';
  resolution: { action: 'dismiss' | 'warn' | 'disable'; note: string | null; resolved_at: string } | null;
  created_at: string;
  updated_at: string;
}
