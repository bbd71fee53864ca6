// The metric names a PromQL expression reads: enough PromQL lexing to check that every metric a rule or a
// dashboard names exists in some process's /metrics (test/e2e/prometheus.test.ts). Not a parser: it drops
// strings, label matchers, ranges and grouping clauses, then keeps the identifiers that are not functions,
// operators or keywords.
const KEYWORDS = new Set(['and', 'or', 'unless', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'offset', 'inf', 'nan', 'atan2']);

export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const match of stripped.matchAll(/\d+(?:\.\d+)?(?:e[+-]?\d+)?|[A-Za-z_:][\w:]*/g)) {
    const token = match[0];
    if (/^\d/.test(token) || KEYWORDS.has(token.toLowerCase())) continue;
    const rest = stripped.slice(match.index + token.length);
    if (/^\s*\(/.test(rest)) continue; // a function call
    names.add(token);
  }
  return [...names];
}

/** The metric a Grafana `label_values(metric{...}, label)` variable query reads. */
export function labelValuesMetric(query: string): string | null {
  const match = /^label_values\((.*),\s*\w+\)$/.exec(query.trim());
  return match ? match[1]!.trim() : null;
}
