import { ValidationError } from './errors.ts';

// One address, `local@domain.tld`, no display name: the ASCII form ajv-formats' `email` accepts, with a dotted domain.
const EMAIL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export function isEmail(text: string): boolean {
  return text.length <= 254 && EMAIL.test(text);
}

/** The owner address as stored: trimmed, or null when none was given; a malformed one is a validation error. */
export function ownerEmail(value: string | null | undefined): string | null {
  if (value === undefined || value === null) return null;
  const email = value.trim();
  if (email === '') return null;
  if (!isEmail(email)) throw new ValidationError([{ path: 'email', message: 'must be an e-mail address (name@example.com)' }]);
  return email;
}
