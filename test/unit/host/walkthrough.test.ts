// The "Get Started with Agent RL" walkthrough as package.json declares it: each step has a button (a
// description line that is one command link) whose command the extension contributes, completes on a
// contributed command or on a context key the extension sets, and has its page under media/; the Runs
// view's welcome link opens this walkthrough; agentRl.defaultPreset (what the first button starts)
// lists exactly the presets. The e2e suite clicks the first three buttons in a real VS Code.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { PRESETS } from '../../../src/shared/presets';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');

interface Step {
  readonly id: string;
  readonly title: string;
  readonly description: string;
  readonly media: { readonly markdown?: string };
  readonly completionEvents?: readonly string[];
}
interface Manifest {
  readonly name: string;
  readonly publisher: string;
  readonly contributes: {
    readonly commands: readonly { readonly command: string }[];
    readonly walkthroughs: readonly { readonly id: string; readonly title: string; readonly when?: string; readonly steps: readonly Step[] }[];
    readonly viewsWelcome: readonly { readonly contents: string }[];
    readonly configuration: { readonly properties: Record<string, { readonly enum?: readonly string[]; readonly default?: unknown }> };
  };
}

const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as Manifest;
const commands = new Set(manifest.contributes.commands.map((c) => c.command));

/** Every .ts file under src, concatenated (where a context key is set). */
function sources(dir = path.join(ROOT, 'src')): string {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .map((e) => (e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? fs.readFileSync(path.join(dir, e.name), 'utf8') : ''))
    .join('\n');
}

describe('the Get Started walkthrough', () => {
  const [walkthrough, ...others] = manifest.contributes.walkthroughs;

  it('is one walkthrough, shown everywhere, with the five steps of issue 42 in order', () => {
    assert.ok(walkthrough);
    assert.equal(others.length, 0);
    assert.equal(walkthrough.id, 'agentRl.gettingStarted');
    assert.equal(walkthrough.title, 'Get Started with Agent RL');
    assert.equal(walkthrough.when, undefined);
    assert.deepEqual(
      walkthrough.steps.map((s) => s.id),
      ['runDefault', 'openDashboard', 'replayFailed', 'newEnvironment', 'pickModel'],
    );
  });

  it('gives each step a button that runs a contributed command, and a page under media/walkthrough', () => {
    for (const step of walkthrough!.steps) {
      const buttons = step.description
        .split('\n')
        .map((l) => /^\[[^\]]+\]\(command:(?:toSide:)?([\w.]+)(?:\?([^)]*))?\)$/.exec(l.trim()))
        .filter((m) => m !== null);
      assert.equal(buttons.length, 1, `${step.id}: one line that is a command link alone (VS Code draws it as a button)`);
      const [, command, args] = buttons[0]!;
      assert.ok(commands.has(command!), `${step.id}: ${command} is a contributed command`);
      if (args !== undefined) assert.ok(Array.isArray(JSON.parse(decodeURIComponent(args))), `${step.id}: its arguments are a JSON array`);
      const page = step.media.markdown;
      assert.match(page ?? '', /^media\/walkthrough\/\w+\.md$/, step.id);
      assert.ok(fs.existsSync(path.join(ROOT, page!)), `${page} exists`);
    }
  });

  it('completes each step on a contributed command or on a context key the extension sets', () => {
    const src = sources();
    for (const step of walkthrough!.steps) {
      assert.ok(step.completionEvents && step.completionEvents.length > 0, `${step.id} says when it is done`);
      for (const event of step.completionEvents) {
        const command = /^onCommand:([\w.]+)$/.exec(event)?.[1];
        const key = /^onContext:([\w.]+)$/.exec(event)?.[1];
        assert.ok(command ?? key, `${step.id}: ${event} is onCommand or onContext`);
        if (command) assert.ok(commands.has(command), `${step.id}: ${command} is contributed`);
        if (key)
          assert.ok(
            new RegExp(`'setContext', '${key.replace(/\./g, '\\.')}', true|markWalkthroughStep\\('${key.replace(/\./g, '\\.')}'\\)`).test(src),
            `${step.id}: src sets ${key}`,
          );
      }
    }
    assert.equal(
      walkthrough!.steps[0]!.description.includes('command:agentRl.startRun?%5B%22default%22%5D'),
      true,
      'the first button asks for the default preset',
    );
  });

  it("is linked from the Runs view's welcome text by its full id", () => {
    const link = `command:workbench.action.openWalkthrough?${encodeURIComponent(JSON.stringify(`${manifest.publisher}.${manifest.name}#${walkthrough!.id}`))}`;
    assert.ok(
      manifest.contributes.viewsWelcome.some((w) => w.contents.includes(link)),
      link,
    );
  });

  it('offers exactly the presets as agentRl.defaultPreset, with one of them as the default', () => {
    const setting = manifest.contributes.configuration.properties['agentRl.defaultPreset']!;
    assert.deepEqual(
      setting.enum,
      PRESETS.map((p) => p.id),
    );
    assert.ok(PRESETS.some((p) => p.id === setting.default));
  });
});
