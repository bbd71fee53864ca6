// The TXT record that proves a customer controls a hostname: what the API tells them to set and what the operator
// looks for. One definition, so the two can never drift apart.

export interface VerificationRecord {
  type: 'TXT';
  name: string;
  value: string;
}

/** `<txtPrefix>.<hostname>` holding `linkplane-verify=<token>`. */
export function verificationRecord(hostname: string, token: string, txtPrefix: string): VerificationRecord {
  return { type: 'TXT', name: `${txtPrefix}.${hostname}`, value: `linkplane-verify=${token}` };
}
