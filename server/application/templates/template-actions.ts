import { VERIFICATION_METHODS } from '@/db/schema';
import { type AnswerHashingBudget, withAnswerHashing } from '@/server/application/answer-hashing';
import { nameMatchIssue } from '@/server/application/cases/wire';
import type { TeamActionContext } from '@/server/application/team-action-context';
import { type AuditEntry, auditedChange } from '@/server/audit/record-audit';
import type { DataScope } from '@/server/platform/data-scope';
import {
  deleteTemplate,
  findTemplateOrFail,
  insertTemplate,
  lockTeamTemplates,
  replaceTemplate,
  type TemplateRecord,
  type TemplateValues,
} from '@/server/templates/templates';
import {
  CREATE_FIELDS_BY_METHOD,
  methodFieldIssues,
  refuseFieldIssues,
  settingsAtCreation,
} from '@/server/verification/methods/creation';
import { customAnswersIn } from '@/server/verification/methods/custom-question/create-input';
import { comparesNames } from '@/server/verification/methods/registry';
import { type CreateTemplateInput, templateLocale, type UpdateTemplateInput } from './wire';

/** How a change to a template reads in the audit log. */
function templateAudit(action: 'template.created' | 'template.updated' | 'template.deleted') {
  return (template: TemplateRecord): AuditEntry => ({
    action,
    target: template.id,
    details: {
      name: template.name,
      // In the API's order (jsonb keeps its keys in its own).
      methods: VERIFICATION_METHODS.filter((method) => template.methods[method] === true),
    },
  });
}

/** The method fields a body gives (a null clears them: not given). */
function givenFields(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(body).filter(([, value]) => value !== undefined && value !== null),
  );
}

/** Who changes templates: in one team and one mode (a test key never touches live templates). */
export type TemplateActionContext = TeamActionContext & {
  scope: DataScope;
  rateLimiters: AnswerHashingBudget;
};

/** The step settings a body gives, a custom question's answer hashed fairly (withAnswerHashing). */
function hashedSettings(ctx: TemplateActionContext, body: Parameters<typeof settingsAtCreation>[0]) {
  return withAnswerHashing(ctx.rateLimiters, ctx.teamId, customAnswersIn(body), (keepAnswer) =>
    settingsAtCreation(body, keepAnswer),
  );
}

/**
 * A team's templates of one mode, each change committed with its audit entry, under the mode's
 * template lock (two creations of one name take turns). The REST API and the console publish the
 * same three.
 */
export const templateActions = {
  create: async (ctx: TemplateActionContext, input: CreateTemplateInput): Promise<TemplateRecord> => {
    // A custom question's answer is hashed before the transaction, within the team's budget.
    const values: TemplateValues = {
      name: input.name,
      methods: input.verification_methods,
      settings: await hashedSettings(ctx, input),
      locale: templateLocale(input.locale),
      nameMatch: input.name_match ?? 'enforce',
      offerPasskey: input.offer_passkey ?? false,
    };
    return auditedChange(
      ctx,
      async (tx) => {
        await lockTeamTemplates(tx, ctx.scope);
        return insertTemplate(tx, ctx.scope, values, ctx.clock());
      },
      templateAudit('template.created'),
    );
  },

  update: async (ctx: TemplateActionContext, input: UpdateTemplateInput): Promise<TemplateRecord> => {
    const { id, name, verification_methods, locale, name_match, offer_passkey, ...fields } = input;
    const given = await hashedSettings(ctx, givenFields(fields));
    return auditedChange(
      ctx,
      async (tx) => {
        await lockTeamTemplates(tx, ctx.scope);
        const current = await findTemplateOrFail(tx, ctx.scope, id);
        const methods = verification_methods ?? current.methods;
        const nameMatch = nameMatchIssue(methods, name_match);
        refuseFieldIssues([
          ...methodFieldIssues(methods, givenFields(fields), { everyCaseGivesThem: false }),
          ...(nameMatch ? [nameMatch] : []),
        ]);
        const settings = { ...current.settings };
        for (const [method, names] of CREATE_FIELDS_BY_METHOD) {
          if (
            methods[method] !== true ||
            names.every((field) => fields[field as keyof typeof fields] === null)
          ) {
            delete settings[method];
          }
          if (given[method]) settings[method] = given[method];
        }
        return replaceTemplate(
          tx,
          ctx.scope,
          current.id,
          {
            name: name ?? current.name,
            methods,
            settings,
            locale: locale === undefined ? current.locale : templateLocale(locale),
            // Without a method that compares names there is none to compare: back to the default.
            nameMatch: comparesNames(methods) ? (name_match ?? current.nameMatch) : 'enforce',
            offerPasskey: offer_passkey ?? current.offerPasskey,
          },
          ctx.clock(),
        );
      },
      templateAudit('template.updated'),
    );
  },

  delete: (ctx: TemplateActionContext, id: string): Promise<TemplateRecord> =>
    auditedChange(
      ctx,
      async (tx) => {
        await lockTeamTemplates(tx, ctx.scope);
        return deleteTemplate(tx, ctx.scope, (await findTemplateOrFail(tx, ctx.scope, id)).id);
      },
      templateAudit('template.deleted'),
    ),
};
