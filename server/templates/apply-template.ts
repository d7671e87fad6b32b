import type { NameMatchMode, VerificationMethod } from '@/db/schema';
import { AppError } from '@/server/platform/errors';
import {
  CREATE_FIELDS_BY_METHOD,
  methodFieldIssues,
  refuseFieldIssues,
} from '@/server/verification/methods/creation';
import { comparesNames, NAME_MATCH_WITHOUT_COMPARISON } from '@/server/verification/methods/registry';
import type { TemplateRecord } from './templates';

/** Finds a team's template by name (memoised per request by `templateLookup`). */
export type TemplateLookup = (name: string) => Promise<TemplateRecord | null>;

/** A case body's method fields and what it says about them, as a template is applied to it. */
interface CaseFields {
  template?: string;
  locale?: string | null;
  name_match?: NameMatchMode;
  offer_passkey?: boolean;
  [field: string]: unknown;
}

/**
 * What a case named `template` starts with: the template's methods, its step settings (each
 * method's replaced by the case's own fields where it gives them), its locale unless the case
 * names one, its name_match and offer_passkey unless the case gives them, and the manager to mail (the case's, else the template's). Refuses, naming the
 * field, what the case gives for a method the template does not request, a method's fields given
 * in part, and a field the template leaves to each case and this case leaves out.
 */
export function applyTemplate<Input extends CaseFields>(template: TemplateRecord, input: Input) {
  const issues = methodFieldIssues(template.methods, input, { everyCaseGivesThem: false });
  for (const [method, fields] of CREATE_FIELDS_BY_METHOD) {
    const given = fields.some((field) => input[field] !== undefined && input[field] !== null);
    if (template.methods[method] === true && !given && !template.settings[method]) {
      for (const field of fields) {
        issues.push({
          field,
          message: `required when ${method} is requested (the template ${template.name} leaves it to each case)`,
        });
      }
    }
  }
  if (input.name_match !== undefined && !comparesNames(template.methods)) {
    issues.push({
      field: 'name_match',
      message: `${NAME_MATCH_WITHOUT_COMPARISON} (the template ${template.name} does not)`,
    });
  }
  refuseFieldIssues(issues);
  const manager = template.settings.manager;
  return {
    input: {
      ...input,
      verification_methods: template.methods,
      locale: input.locale ?? template.locale,
      name_match: input.name_match ?? template.nameMatch,
      offer_passkey: input.offer_passkey ?? template.offerPasskey,
      manager_name: input.manager_name ?? (manager?.manager_name as string | undefined),
      manager_email: input.manager_email ?? (manager?.manager_email as string | undefined),
    },
    inherited: template.settings as Partial<Record<VerificationMethod, Record<string, unknown>>>,
  };
}

/** The template named in a case body, or the validation error naming it. */
export async function namedTemplate(templates: TemplateLookup, name: string): Promise<TemplateRecord> {
  const template = await templates(name);
  if (!template)
    throw new AppError('VALIDATION_ERROR', `template: your team has no template named "${name}"`);
  return template;
}
