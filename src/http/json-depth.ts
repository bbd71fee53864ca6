import { InvalidRequestError } from '../platform/errors.ts';

/**
 * How deep a JSON body may nest: objects and arrays inside one another, the outermost counting as 1. No request
 * shape of the API comes near it (a link's rules are under ten levels); the bound exists so that nothing that walks
 * a parsed value (validation, logging, storage) can be made to recurse without end.
 */
export const MAX_JSON_DEPTH = 64;

/** Refusal of a body nested deeper than MAX_JSON_DEPTH, answered 400 `invalid_request`. */
export class JsonTooDeepError extends InvalidRequestError {
  constructor() {
    super(`The JSON body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels.`);
  }
}

const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether JSON text nests deeper than `max`, read in one pass over the characters before any parse: brackets
 * inside strings are text. Text that is not JSON may be miscounted; the parser refuses it afterwards anyway.
 */
export function jsonTextTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > max) return true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--;
  }
  return false;
}

/** Whether a parsed value nests deeper than `max`, found without recursion (the value may come from anywhere). */
export function valueTooDeep(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const pending: Array<[unknown, number]> = [[value, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item !== 'object' || item === null) continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (typeof child === 'object' && child !== null) pending.push([child, depth + 1]);
    }
  }
  return false;
}
