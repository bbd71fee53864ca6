// Plan capabilities as people read them: the API's ids (`ab_test`) are for programs.
const NAMES: Record<string, string> = {
  targeting: 'Targeting',
  ab_test: 'A/B tests',
  rules: 'Rules',
  mobile: 'Mobile deep links',
  rotator: 'Rotator',
  password: 'Password protection',
  custom_domains: 'Custom domains',
  webhooks: 'Webhooks',
  conversions: 'Conversions',
  analytics_export: 'Analytics export',
  ip_lists: 'IP lists',
};

/** The readable name of a capability id; an id this build does not know is shown with its underscores as spaces. */
export function capabilityName(id: string): string {
  return NAMES[id] ?? id.replaceAll('_', ' ');
}

/** "A/B tests, Rules and Webhooks", or `none` for an empty list. */
export function capabilityList(ids: readonly string[], none = 'None'): string {
  const names = ids.map(capabilityName);
  if (names.length === 0) return none;
  return names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names.at(-1)!}`;
}
