// Errors carry MongoDB's numeric code and codeName because the driver branches on them
// (11000 → duplicate key, 112/251 + TransientTransactionError → withTransaction retries).

export const Codes = {
  BadValue: 2,
  FailedToParse: 9,
  TypeMismatch: 14,
  NamespaceNotFound: 26,
  IndexNotFound: 27,
  PathNotViable: 28,
  ConflictingUpdateOperators: 40,
  CursorNotFound: 43,
  NamespaceExists: 48,
  InvalidIdField: 53,
  CommandNotFound: 59,
  ImmutableField: 66,
  InvalidOptions: 72,
  IndexOptionsConflict: 85,
  IndexKeySpecsConflict: 86,
  UnsatisfiableWriteConcern: 100,
  WriteConflict: 112,
  CommandNotSupported: 115,
  NotImplemented: 238,
  ConversionFailure: 241,
  NoSuchTransaction: 251,
  OperationNotSupportedInTransaction: 263,
  BSONObjectTooLarge: 10334,
  DuplicateKey: 11000,
  // Assertions MongoDB raises by their source location: no name of their own, the codeName is `Location<code>`.
  Location17420: 17420,
  Location31254: 31254,
  Location40066: 40066,
  Location40324: 40324,
  Location51091: 51091,
} as const;

export type CodeName = keyof typeof Codes;

export class CommandError extends Error {
  readonly code: number;
  readonly codeName: string;
  readonly labels: string[];
  readonly extra: Record<string, unknown>;

  constructor(codeName: CodeName, message: string, extra: Record<string, unknown> = {}, labels: string[] = []) {
    super(message);
    this.code = Codes[codeName];
    this.codeName = codeName;
    this.extra = extra;
    this.labels = labels;
  }

  toReply(): Record<string, unknown> {
    const reply: Record<string, unknown> = { ok: 0, errmsg: this.message, code: this.code, codeName: this.codeName, ...this.extra };
    if (this.labels.length > 0) reply.errorLabels = this.labels;
    return reply;
  }

  /** The shape used inside `writeErrors` of insert/update/delete replies. */
  toWriteError(index: number): Record<string, unknown> {
    return { index, code: this.code, errmsg: this.message, ...this.extra };
  }
}

export function badValue(message: string): CommandError {
  return new CommandError('BadValue', message);
}

export function transient(codeName: 'WriteConflict' | 'NoSuchTransaction', message: string): CommandError {
  return new CommandError(codeName, message, {}, ['TransientTransactionError']);
}

/** Any thrown value becomes a CommandError; mingo errors are reported as BadValue. */
export function toCommandError(err: unknown): CommandError {
  if (err instanceof CommandError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (message.includes('would modify the immutable field')) return new CommandError('ImmutableField', message);
  return new CommandError('BadValue', message);
}
