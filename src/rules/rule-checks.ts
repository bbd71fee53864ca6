// Checks of rules that their schema cannot express, shared by link content and workspace settings.
import { randomBase62 } from '../platform/ids.ts';
import type { ErrorDetail } from '../platform/errors.ts';
import type { Rule } from './rule.schemas.ts';
import { isIpOrCidr } from './ip-match.ts';

/** Rule `match.ip` entries must be addresses or CIDR ranges (the schema bounds only their length). */
export function ruleIpDetails(rules: readonly Rule[] | undefined, root = 'rules'): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  rules?.forEach((rule, i) =>
    rule.match.ip?.forEach((entry, j) => {
      if (!isIpOrCidr(entry)) details.push({ path: `${root}[${i}].match.ip[${j}]`, message: 'is not an IP address or CIDR range' });
    }),
  );
  return details;
}

/** Rules get a stable id when the client gives none: clicks record which rule acted. */
export function withRuleIds<T extends { id?: string }>(rules: readonly T[] | undefined): T[] {
  return (rules ?? []).map((rule) => (rule.id ? rule : { ...rule, id: `rule_${randomBase62(10)}` }));
}
