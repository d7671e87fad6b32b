import { describe, expect, it } from 'vitest';
import en from '@/server/i18n/messages/en.json' with { type: 'json' };
import type { MethodDefinition } from './definition';
import { METHOD_MODULES } from './modules';
import { METHODS } from './registry';

/**
 * The modules are what the application and API layers iterate: each must be its method's whole,
 * in the registry's order, and agree with its own definition.
 */
describe('the method modules', () => {
  it("are the registry's definitions, in its order", () => {
    expect(METHOD_MODULES.map((module) => module.definition)).toEqual([...METHODS]);
  });

  it('mail a link exactly when their definition says they mail one', () => {
    for (const { definition, linkMail } of METHOD_MODULES) {
      expect({ method: definition.key, mails: linkMail !== null }).toEqual({
        method: definition.key,
        mails: definition.mailsLinkTo !== null,
      });
    }
  });

  it('have a page section unless the step that adds them shows them', () => {
    for (const { definition, pageSection } of METHOD_MODULES) {
      const shownWithAnother = METHODS.some(
        (other: MethodDefinition) =>
          [...other.passesWith].includes(definition.key) && [...other.adds].includes(definition.key),
      );
      expect({ method: definition.key, section: pageSection !== null }).toEqual({
        method: definition.key,
        section: !shownWithAnother,
      });
    }
  });

  it('leave notices of their own, each with its message in the catalogue', () => {
    const codes = METHOD_MODULES.flatMap((module) => Object.keys(module.notices));
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) expect(en).toHaveProperty([`notice.${code}`]);
  });

  it('take create fields that no other method takes', () => {
    const fields = METHOD_MODULES.flatMap((module) => Object.keys(module.createInput?.fields ?? {}));
    expect(new Set(fields).size).toBe(fields.length);
    expect(fields).toEqual([
      'custom_question_text',
      'custom_question_answer',
      'manager_name',
      'manager_email',
    ]);
  });
});
