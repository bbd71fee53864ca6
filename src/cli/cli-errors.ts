// The two failures of the `linkplane` command that are not the API's or the database's own refusals.

/** A mistake on the command line: printed as one line, with a hint to the help that would have avoided it. */
export class UsageError extends Error {
  hint: string | null;
  constructor(message: string, hint: string | null = null) {
    super(message);
    this.hint = hint;
  }
}

/** A failure at run time that is not a refusal (the database or the API cannot be reached): a sentence, exit 1. */
export class Failure extends Error {}

/** A value the command cannot run without. */
export function required(value: string | undefined, flag: string): string {
  if (value === undefined || value === '') throw new UsageError(`missing ${flag}`);
  return value;
}
