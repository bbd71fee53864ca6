import { CopyButton } from '../../components/copy-button.tsx';
import { DataTable } from '../../components/data-table.tsx';
import { localDateTime } from '../../components/date-time.ts';
import { STEPS, statusLabel, type DnsRecord, type Domain } from './domain-types.ts';

/** One domain: where it is on the way to active, the DNS records to set (each copyable), and why it failed. */
export function DomainCard({ domain, onDelete }: { domain: Domain; onDelete?: (domain: Domain) => void }) {
  const headingId = `domain-${domain.id}`;
  const current = STEPS.findIndex((s) => s.status === domain.status);
  return (
    <article class="domain-card" aria-labelledby={headingId}>
      <header class="domain-header">
        <h3 id={headingId}>{domain.hostname}</h3>
        <span class={`status-badge status-${domain.status}`} data-testid="domain-status">
          {statusLabel(domain.status)}
        </span>
      </header>
      {domain.default ? (
        <p>The default short domain: every workspace can use it, and it is always active.</p>
      ) : (
        <>
          {domain.partner_domain && <p>A domain of your partner: your links may use it; the partner manages it.</p>}
          {domain.owner && <p>Owner: {domain.owner.kind === 'partner' ? 'this partner (usable by every client)' : `client ${domain.owner.client_id}`}</p>}
          <ol class="domain-steps" aria-label="Progress">
            {STEPS.map((step, index) => {
              const done = domain.status !== 'error' && index < current;
              const here = index === current;
              return (
                <li key={step.status} class={done ? 'done' : here ? 'current' : 'todo'} aria-current={here ? 'step' : undefined}>
                  {step.label}
                  <span class="visually-hidden">{done ? ': done' : here ? ': in progress' : ': not yet'}</span>
                </li>
              );
            })}
          </ol>
          <p>{domain.status === 'error' ? 'Provisioning failed.' : STEPS[current]?.doing}</p>
          {domain.error && (
            <div class="error-banner">
              <strong>{domain.error.reason}</strong>
              <p>{domain.error.message}</p>
            </div>
          )}
          {domain.records.length > 0 && domain.status !== 'active' && <Records hostname={domain.hostname} records={domain.records} />}
          {domain.records.length > 0 && domain.status === 'active' && (
            <details>
              <summary>DNS records</summary>
              <Records hostname={domain.hostname} records={domain.records} />
            </details>
          )}
          <p class="domain-dates">
            Connected {localDateTime(domain.created_at, '—')}
            {domain.activated_at ? `; active since ${localDateTime(domain.activated_at)}` : ''}.
          </p>
          {onDelete && (
            <button type="button" class="secondary outline" onClick={() => onDelete(domain)}>
              Delete {domain.hostname}
            </button>
          )}
        </>
      )}
    </article>
  );
}

function Records({ hostname, records }: { hostname: string; records: DnsRecord[] }) {
  return (
    <DataTable<DnsRecord>
      caption={`DNS records to set for ${hostname}`}
      rows={records}
      rowKey={(r) => `${r.type} ${r.name} ${r.value}`}
      columns={[
        { label: 'Type', render: (r) => r.type },
        {
          label: 'Name',
          render: (r) => (
            <span class="record-cell">
              <code>{r.name}</code> <CopyButton value={r.name} what={`${r.type} record name`} />
            </span>
          ),
        },
        {
          label: 'Value',
          render: (r) => (
            <span class="record-cell">
              <code>{r.value}</code> <CopyButton value={r.value} what={`${r.type} record value`} />
              {r.note && <small class="record-note">{r.note}</small>}
            </span>
          ),
        },
      ]}
    />
  );
}
