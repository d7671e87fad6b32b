import { describe, expect, it } from 'vitest';
import { html } from '@/server/platform/html';
import { translator } from './translator';

const FSI = '\u2068';
const PDI = '\u2069';

describe('values inserted into messages', () => {
  it('are isolated in a right-to-left message, so a Latin value keeps its own order', () => {
    const hint = translator('ar').text('sms.phoneHint', { example: '+44 7911 123456' });
    expect(hint).toContain(`${FSI}+44 7911 123456${PDI}`);
    const heading = translator('ar').text('case.heading', { team: 'Acme IT' });
    expect(heading).toContain(`${FSI}Acme IT${PDI}`);
  });

  it('are isolated in a left-to-right message when they hold right-to-left letters', () => {
    expect(translator('en').text('case.heading', { team: 'شركة نورث ويند' })).toContain(
      `${FSI}شركة نورث ويند${PDI}`,
    );
  });

  it('are left alone elsewhere: Latin in a left-to-right message, and a code of digits', () => {
    const heading = translator('en').text('case.heading', { team: 'Acme IT' });
    expect(heading).not.toMatch(/[\u2068\u2069]/);
    expect(translator('ar').text('sms.text', { team: 'Acme', code: '123456', minutes: 10 })).toContain(
      ` 123456،`,
    );
  });

  it('are wrapped in <bdi> in markup, escaped', () => {
    const rich = translator('ar').rich(
      'testMode.banner',
      {},
      { strong: (content) => html`<strong>${content}</strong>` },
    );
    expect(String(rich)).not.toContain('<bdi>');
    const withValue = translator('ar').rich('page.logoAlt', { team: '<Acme & Co>' }, {});
    expect(String(withValue)).toContain('<bdi>&lt;Acme &amp; Co&gt;</bdi>');
  });
});
