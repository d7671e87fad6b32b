import { VERIFICATION_METHODS } from '@/db/schema';
import type { TeamActionContext } from '@/server/application/team-action-context';
import { type AuditEntry, auditedChange } from '@/server/audit/record-audit';
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

/**
 * A team's templates, each change committed with its audit entry, under the team's template lock
 * (two creations of one name take turns). The REST API and the console publish the same three.
 */
export const templateActions = {
  create: (ctx: TeamActionContext, input: CreateTemplateInput): Promise<TemplateRecord> =>
    auditedChange(
      ctx,
      async (tx) => {
        // Hashing a custom question's answer happens before the lock is taken.
        const values: TemplateValues = {
          name: input.name,
          methods: input.verification_methods,
          settings: await settingsAtCreation(input),
          locale: templateLocale(input.locale),
        };
        await lockTeamTemplates(tx, ctx.teamId);
        return insertTemplate(tx, ctx.teamId, values, ctx.clock());
      },
      templateAudit('template.created'),
    ),

  update: (ctx: TeamActionContext, input: UpdateTemplateInput): Promise<TemplateRecord> =>
    auditedChange(
      ctx,
      async (tx) => {
        const { id, name, verification_methods, locale, ...fields } = input;
        const given = await settingsAtCreation(givenFields(fields));
        await lockTeamTemplates(tx, ctx.teamId);
        const current = await findTemplateOrFail(tx, ctx.teamId, id);
        const methods = verification_methods ?? current.methods;
        refuseFieldIssues(methodFieldIssues(methods, givenFields(fields), { everyCaseGivesThem: false }));
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
          ctx.teamId,
          current.id,
          {
            name: name ?? current.name,
            methods,
            settings,
            locale: locale === undefined ? current.locale : templateLocale(locale),
          },
          ctx.clock(),
        );
      },
      templateAudit('template.updated'),
    ),

  delete: (ctx: TeamActionContext, id: string): Promise<TemplateRecord> =>
    auditedChange(
      ctx,
      async (tx) => {
        await lockTeamTemplates(tx, ctx.teamId);
        return deleteTemplate(tx, ctx.teamId, (await findTemplateOrFail(tx, ctx.teamId, id)).id);
      },
      templateAudit('template.deleted'),
    ),
};
