// docs/reference/settings.md: the extension's settings and commands, from package.json's
// contributes.configuration and contributes.commands (with the menus that show each command).
import { cell, code, table } from './markdown';

export const SETTINGS_PAGE = 'docs/reference/settings.md';
export const SETTINGS_SOURCES = ['package.json'] as const;

interface SettingSchema {
  readonly type?: string | readonly string[];
  readonly default?: unknown;
  readonly enum?: readonly unknown[];
  readonly items?: { readonly type?: string };
  readonly minimum?: number;
  readonly maximum?: number;
  readonly scope?: string;
  readonly description?: string;
  readonly markdownDescription?: string;
}

interface CommandEntry {
  readonly command: string;
  readonly title: string;
  readonly category?: string;
}

interface MenuEntry {
  readonly command: string;
  readonly when?: string;
  readonly group?: string;
}

/** The part of package.json the page reads. */
export interface ExtensionManifest {
  readonly contributes?: {
    readonly configuration?: { readonly title?: string; readonly properties?: Readonly<Record<string, SettingSchema>> };
    readonly commands?: readonly CommandEntry[];
    readonly menus?: Readonly<Record<string, readonly MenuEntry[]>>;
  };
}

/** Where VS Code shows a menu's entries, in words. */
const MENU_NAMES: Readonly<Record<string, string>> = {
  'view/title': 'view title bar',
  'view/item/context': 'view item menu',
  'editor/title': 'editor title bar',
};

function typeText(s: SettingSchema): string {
  const type = typeof s.type === 'string' ? s.type : (s.type ?? []).join(' or ');
  const of = s.type === 'array' && s.items?.type ? ` of ${s.items.type}` : '';
  return cell(`${type}${of}`);
}

function valuesText(s: SettingSchema): string {
  if (s.enum) return s.enum.map((v) => code(String(v))).join(', ');
  const bounds = [s.minimum !== undefined ? `≥ ${s.minimum}` : '', s.maximum !== undefined ? `≤ ${s.maximum}` : ''].filter(Boolean);
  return cell(bounds.join(' and '));
}

/** Where a command shows: the Command Palette (unless hidden there) and each menu that lists it. */
function whereText(command: string, menus: Readonly<Record<string, readonly MenuEntry[]>>): string {
  const palette = (menus.commandPalette ?? []).find((m) => m.command === command);
  const places: string[] = [];
  if (palette === undefined) places.push('Command Palette');
  else if (palette.when !== 'false') places.push(`Command Palette when ${code(palette.when ?? 'true')}`);
  for (const [menu, entries] of Object.entries(menus)) {
    if (menu === 'commandPalette') continue;
    // one place per condition: an entry as an inline button and in the menu under the same condition is one row
    const byWhen = new Map<string, boolean[]>();
    for (const e of entries.filter((m) => m.command === command)) byWhen.set(e.when ?? 'true', [...(byWhen.get(e.when ?? 'true') ?? []), e.group === 'inline']);
    for (const [when, inline] of byWhen) {
      const how = inline.every(Boolean) ? ' (inline button)' : inline.some(Boolean) ? ' and its inline button' : '';
      places.push(`${cell(MENU_NAMES[menu] ?? menu)}${how} when ${code(when)}`);
    }
  }
  return places.length > 0 ? places.join('; ') : 'not in the Command Palette or any menu';
}

export function renderSettingsPage(header: string, manifest: ExtensionManifest): string {
  const c = manifest.contributes ?? {};
  const settings = Object.entries(c.configuration?.properties ?? {});
  const menus = c.menus ?? {};
  return [
    '# VS Code settings and commands',
    '',
    header,
    '',
    '## Settings',
    '',
    cell(
      `Under ${c.configuration?.title ?? 'the extension'} in the Settings editor. A machine setting can only be set in the user settings, never by a workspace.`,
    ),
    '',
    table(
      ['setting', 'type', 'values', 'default', 'scope', 'what it does'],
      settings.map(([key, s]) => [
        code(key),
        typeText(s),
        valuesText(s),
        code(JSON.stringify(s.default)),
        cell(s.scope ?? 'window'),
        cell(s.description ?? s.markdownDescription ?? ''),
      ]),
    ),
    '',
    '## Commands',
    '',
    table(
      ['command', 'title', 'where it shows'],
      (c.commands ?? []).map((cmd) => [code(cmd.command), cell(cmd.category ? `${cmd.category}: ${cmd.title}` : cmd.title), whereText(cmd.command, menus)]),
    ),
    '',
  ].join('\n');
}
