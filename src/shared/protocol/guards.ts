// Tiny structural checks for messages that cross a process boundary (never trust the other side).
export type Guard<T> = (x: unknown) => x is T;

export const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
export const isNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
export const isString = (x: unknown): x is string => typeof x === 'string';

/** A guard for `{ type: name, ...fields }` where each field has its own check. */
export function shape<T>(type: string, fields: Readonly<Record<string, (v: unknown) => boolean>>): Guard<T> {
  return (x: unknown): x is T => isObject(x) && x.type === type && Object.entries(fields).every(([k, check]) => check(x[k]));
}

export function oneOf<T>(...guards: Guard<T>[]): Guard<T> {
  return (x: unknown): x is T => guards.some((g) => g(x));
}
