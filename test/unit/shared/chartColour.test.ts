import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { opaqueColour } from '../../../src/shared/chartColour';

describe('opaqueColour (a theme colour as a chart line or bar draws it)', () => {
  it('drops the transparency of rgba() and of #rrggbbaa / #rgba', () => {
    // Light Modern's and Dark Modern's --vscode-charts-orange, as the webview reads it
    assert.equal(opaqueColour('rgba(234, 92, 0, 0.33)'), 'rgb(234, 92, 0)');
    assert.equal(opaqueColour(' rgba(234 92 0 / 33%) '), 'rgb(234, 92, 0)');
    assert.equal(opaqueColour('#ea5c0055'), '#ea5c00');
    assert.equal(opaqueColour('#F005'), '#F00');
  });

  it('leaves an opaque colour as it is', () => {
    for (const c of ['#0063d3', '#fff', 'rgb(59, 59, 59)', 'orange', 'transparent']) assert.equal(opaqueColour(c), c);
  });
});
