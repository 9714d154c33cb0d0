// Which observation field the model reads and which action field its text goes to, from the server's
// /schema (pydantic's JSON schemas of its Action and Observation classes, openenv-core's
// SchemaResponse {action, observation, state}) unless the config names them; and the text of a field
// of an observation, by a dotted path.
import { OpenEnvError } from './openenvSession';

/** Fields every openenv-core Observation has (serialize_observation sends done and reward apart, never metadata). */
const OBSERVATION_BASE = new Set(['done', 'reward', 'metadata']);
/** The text field of an observation with several, by these names first. */
const PREFERRED_TEXT = ['prompt', 'text', 'message', 'observation', 'content'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A schema property that holds text: {"type": "string"}, or Optional[str]'s {"anyOf": [{"type": "string"}, {"type": "null"}]}. */
function isText(p: unknown): boolean {
  if (!isObject(p)) return false;
  if (p.type === 'string') return true;
  return Array.isArray(p.anyOf) && p.anyOf.some((a) => isObject(a) && a.type === 'string');
}

function propertiesOf(schema: unknown): Record<string, unknown> {
  return isObject(schema) && isObject(schema.properties) ? schema.properties : {};
}

export interface OpenEnvFields {
  /** The observation's dotted path whose text the model reads; '' = the whole observation as JSON. */
  readonly observation: string;
  /** The action's field the model's text goes to. */
  readonly action: string;
}

/**
 * The fields a run uses: the configured ones, else the schema's one text field of each (of several: a
 * preferred name, then the first; an observation without any is shown whole, as JSON). Throws naming
 * the option when the action has no text field, or requires fields the workbench does not send.
 */
export function chooseFields(schema: unknown, given: { observationField: string; actionField: string }, url: string): OpenEnvFields {
  const s = isObject(schema) ? schema : {};
  const action = propertiesOf(s.action);
  const actionFields = Object.keys(action).filter((k) => k !== 'metadata');
  const required = isObject(s.action) && Array.isArray(s.action.required) ? s.action.required.filter((k): k is string => typeof k === 'string') : [];
  let actionField = given.actionField;
  if (actionField === '') {
    const text = actionFields.filter((k) => isText(action[k]));
    const pick = text.find((k) => required.includes(k)) ?? text[0];
    if (pick === undefined)
      throw new OpenEnvError(
        `the OpenEnv server at ${url}: its action schema has no text field (its fields: ${actionFields.join(', ') || 'none'}). Fix: name the field the model's text goes to in envOptions.actionField`,
      );
    actionField = pick;
  }
  const others = required.filter((k) => k !== actionField);
  if (others.length > 0)
    throw new OpenEnvError(
      `the OpenEnv server at ${url}: its action requires ${others.join(', ')} besides ${actionField}, and the workbench sends the model's text as ${actionField} alone. Fix: an environment whose action is one text field, or name that field in envOptions.actionField`,
    );
  let observationField = given.observationField;
  if (observationField === '') {
    const obs = propertiesOf(s.observation);
    const text = Object.keys(obs).filter((k) => !OBSERVATION_BASE.has(k) && isText(obs[k]));
    observationField = text.length === 1 ? text[0]! : (PREFERRED_TEXT.find((k) => text.includes(k)) ?? text[0] ?? '');
  }
  return { observation: observationField, action: actionField };
}

/**
 * The text the model reads of an observation: the field at `path` (text as it is, other values as
 * JSON; null as empty), or the whole observation as JSON for ''. A missing field is the server's
 * malformed observation: the error names the path and the fields there are.
 */
export function observationText(observation: Readonly<Record<string, unknown>>, path: string, where: string): string {
  if (path === '') return JSON.stringify(observation);
  let v: unknown = observation;
  for (const key of path.split('.')) {
    if (!isObject(v) || !(key in v))
      throw new OpenEnvError(
        `${where} answered a malformed observation: it has no ${path} (its fields: ${isObject(v) ? Object.keys(v).join(', ') || 'none' : typeof v}). Fix: name the field the model reads in envOptions.observationField, or make the environment return it`,
      );
    v = v[key];
  }
  if (typeof v === 'string') return v;
  return v === null || v === undefined ? '' : JSON.stringify(v);
}
