import type { ClickRecord } from '../visitor/click-record.ts';
import type { ClickDoc } from '../clicks/click.store.ts';

/** A stored click as the record the redirect published (the rebuild and the export read raw clicks through it). */
export function fromClickDoc(doc: Omit<ClickDoc, 'counted' | 'expire_at'>): ClickRecord {
  const d = doc.decision;
  return {
    id: doc._id,
    ts: doc.ts.toISOString(),
    workspace_id: doc.workspace_id,
    link_id: doc.link_id,
    domain_id: doc.domain_id,
    domain: doc.domain,
    slug: doc.slug,
    outcome: doc.outcome,
    destination: doc.destination,
    decision: {
      step: d.step,
      ruleId: d.rule_id,
      workspaceRule: d.workspace_rule,
      targetingIndex: d.targeting_index,
      variantIndex: d.variant_index,
      destinationId: d.destination_id,
      rotatorFallback: d.rotator_fallback,
    },
    visitor: doc.visitor,
  };
}
