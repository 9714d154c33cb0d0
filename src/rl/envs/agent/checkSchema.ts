// The check of a tool's `parameters` in a chat-completions request (parseChatRequest.ts): a plausible
// JSON Schema, refused with a 400 naming the exact spot (tools[0].function.parameters.properties.x.type)
// when it is not. Only its shape is checked, not what it allows: that is the model's business.
import { clip, EndpointError, invalid, isObject, kindOf, quoteList } from './chatRequest';

const SCHEMA_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'];
/** Below this depth a schema is not checked further (its shape is the model's business, not the wire's). */
const SCHEMA_DEPTH = 32;
const member = (param: string, key: string): string => (/^[A-Za-z_$][\w$]*$/.test(key) ? `${param}.${key}` : `${param}[${JSON.stringify(key)}]`);
const badSchema = (param: string, message: string): EndpointError => invalid(param, `Invalid schema at '${param}': ${message}`, 'invalid_function_parameters');

/**
 * Whether a value is a plausible JSON Schema: an object (or, below the top, true/false) whose `type`
 * names JSON Schema types, whose `properties` hold schemas and whose `required` lists names; nested
 * schemas (properties, items, anyOf/oneOf/allOf, $defs) are checked the same way.
 */
export function checkSchema(s: unknown, param: string, depth: number): void {
  if (depth > 0 && typeof s === 'boolean') return;
  if (!isObject(s)) throw badSchema(param, `expected a JSON Schema object, but got ${kindOf(s)} instead.`);
  if (depth >= SCHEMA_DEPTH) return;
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? (s.type as unknown[]) : [s.type];
    const bad = types.length === 0 ? s.type : types.find((t) => typeof t !== 'string' || !SCHEMA_TYPES.includes(t));
    if (bad !== undefined) {
      const shown = typeof bad === 'string' ? `'${clip(bad)}'` : kindOf(bad);
      throw badSchema(member(param, 'type'), `${shown} is not a JSON Schema type (one of ${quoteList(SCHEMA_TYPES)}, or an array of them).`);
    }
    if (depth === 0 && !types.includes('object')) throw badSchema(member(param, 'type'), `a function's parameters must be a schema of type 'object'.`);
  }
  if (s.properties !== undefined) {
    const props = member(param, 'properties');
    if (!isObject(s.properties)) throw badSchema(props, `expected an object of schemas, but got ${kindOf(s.properties)} instead.`);
    for (const [k, sub] of Object.entries(s.properties)) checkSchema(sub, member(props, k), depth + 1);
  }
  if (s.required !== undefined && (!Array.isArray(s.required) || !s.required.every((r) => typeof r === 'string'))) {
    throw badSchema(member(param, 'required'), 'expected an array of property names (strings).');
  }
  if (s.items !== undefined) {
    if (Array.isArray(s.items)) s.items.forEach((sub, j) => checkSchema(sub, `${member(param, 'items')}[${j}]`, depth + 1));
    else checkSchema(s.items, member(param, 'items'), depth + 1);
  }
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    const list = s[key];
    if (list === undefined) continue;
    if (!Array.isArray(list)) throw badSchema(member(param, key), `expected an array of schemas, but got ${kindOf(list)} instead.`);
    list.forEach((sub, j) => checkSchema(sub, `${member(param, key)}[${j}]`, depth + 1));
  }
  for (const key of ['$defs', 'definitions']) {
    const defs = s[key];
    if (defs === undefined) continue;
    if (!isObject(defs)) throw badSchema(member(param, key), `expected an object of schemas, but got ${kindOf(defs)} instead.`);
    for (const [k, sub] of Object.entries(defs)) checkSchema(sub, member(member(param, key), k), depth + 1);
  }
}
