import { z } from 'zod';
import { NAME_MATCH_MODES, VERIFICATION_METHODS } from '@/db/schema';
import {
  caseLocale,
  nameMatchInput,
  nameMatchIssue,
  offerPasskeyInput,
  verificationMethodsInput,
} from '@/server/application/cases/wire';
import { supportedLocale } from '@/server/i18n/locales';
import { SUPPORTED_LOCALES } from '@/server/i18n/supported-locales';
import { templateNameInput } from '@/server/templates/template-name';
import type { TemplateRecord } from '@/server/templates/templates';
import {
  METHOD_CREATE_FIELDS,
  methodFieldIssues,
  shownSettings,
} from '@/server/verification/methods/creation';

const EXAMPLE_TEMPLATE_ID = '0b3c54f0-5d2e-4c1b-9a7e-2f9d8c6b4a10';
const EXAMPLE_TIME = '2026-01-31T09:00:00.000Z';

/** The `{id}` of every template route. */
export const templateIdInput = z.object({
  id: z.string().meta({ description: 'The template’s id.', examples: [EXAMPLE_TEMPLATE_ID] }),
});

const templateFields = {
  name: templateNameInput.meta({
    description:
      'How cases (`template`) and identity providers (the scope `idv_flow_<name>`) name it: 1 to 40 lowercase letters, digits, `-` or `_`, unique in your team.',
    examples: ['helpdesk'],
  }),
  verification_methods: verificationMethodsInput,
  locale: caseLocale.nullish().meta({
    description: `The language its cases' subjects are addressed in unless a case names its own: one of ${SUPPORTED_LOCALES.join(', ')} (or a tag that falls back to one); null for none.`,
    examples: ['de'],
  }),
  name_match: nameMatchInput,
  offer_passkey: offerPasskeyInput,
  // The methods' own fields, as a case takes them; a template may leave them to each case.
  ...METHOD_CREATE_FIELDS,
};

/** Fields given for a method the template does not request, or a method's fields in part. */
function refineMethodFields(
  body: { verification_methods?: Partial<Record<string, boolean>> } & Record<string, unknown>,
  ctx: z.RefinementCtx,
): void {
  if (!body.verification_methods) return;
  const nameMatch = nameMatchIssue(body.verification_methods, body.name_match);
  for (const { field, message } of [
    ...methodFieldIssues(body.verification_methods, body, { everyCaseGivesThem: false }),
    ...(nameMatch ? [nameMatch] : []),
  ]) {
    ctx.addIssue({ code: 'custom', path: [field], message });
  }
}

const onlyOnceMethodsAreRight = {
  when: (payload: { issues: Array<{ path?: PropertyKey[]; code: string }> }) =>
    !payload.issues.some((issue) =>
      issue.path?.length ? issue.path[0] === 'verification_methods' : issue.code === 'invalid_type',
    ),
};

/** A create field's description and examples, wherever its optional wrapper keeps them. */
function fieldMeta(schema: z.ZodType): { description?: string; examples?: unknown[] } {
  const own = schema.meta();
  if (own) return own as { description?: string; examples?: unknown[] };
  return (schema instanceof z.ZodOptional ? (schema.unwrap() as z.ZodType).meta() : undefined) ?? {};
}

export const createTemplateInput = z
  .strictObject(templateFields)
  .superRefine(refineMethodFields, onlyOnceMethodsAreRight);

export type CreateTemplateInput = z.infer<typeof createTemplateInput>;

/**
 * An update names what changes: `name`, `locale`, `name_match`, `verification_methods` (the whole set; settings
 * of methods it no longer requests go), and any method's fields (given together; null both to
 * leave them to each case again).
 */
export const updateTemplateInput = z
  .strictObject({
    ...templateIdInput.shape,
    name: templateFields.name.optional(),
    verification_methods: verificationMethodsInput.optional(),
    locale: templateFields.locale,
    name_match: nameMatchInput,
    offer_passkey: offerPasskeyInput,
    ...Object.fromEntries(
      Object.entries(METHOD_CREATE_FIELDS).map(([field, schema]) => [
        field,
        schema.nullable().meta({
          ...fieldMeta(schema),
          description: `${fieldMeta(schema).description ?? ''} Null (with the method's other field) leaves it to each case.`,
        }),
      ]),
    ),
  })
  .superRefine(
    (body, ctx) => refineMethodFields(body as Parameters<typeof refineMethodFields>[0], ctx),
    onlyOnceMethodsAreRight,
  );

export type UpdateTemplateInput = z.infer<typeof updateTemplateInput>;

export const templateOutput = z
  .object({
    id: z.uuid().meta({ description: 'The template’s id.', examples: [EXAMPLE_TEMPLATE_ID] }),
    name: z.string().meta({ description: 'Its name, as cases and scopes say it.', examples: ['helpdesk'] }),
    verification_methods: z.record(z.string(), z.boolean()).meta({
      description: 'The methods it requests.',
      examples: [{ email: true, sms: true, government_id: true }],
    }),
    locale: z
      .string()
      .nullable()
      .meta({
        description: 'The language its cases are in unless a case names one; null for none.',
        examples: [null],
      }),
    name_match: z.enum(NAME_MATCH_MODES).meta({
      description:
        'Its cases’ `name_match` unless a case gives its own: `enforce` fails a case whose ID document shows another name than expected, `record` lets it close and records the mismatch.',
      examples: ['enforce'],
    }),
    offer_passkey: z.boolean().meta({
      description:
        'Whether its cases offer a passkey once closed, unless a case gives its own `offer_passkey`.',
      examples: [false],
    }),
    custom_question_text: z
      .string()
      .nullable()
      .meta({
        description:
          'With `custom_question`: the question every case asks (its answer is kept only as a hash and never returned); null when each case gives its own.',
        examples: [null],
      }),
    manager_name: z
      .string()
      .nullable()
      .meta({
        description: 'With `manager`: the manager every case asks; null when each case names its own.',
        examples: [null],
      }),
    manager_email: z
      .string()
      .nullable()
      .meta({
        description: 'With `manager`: where every case mails the manager; null when each case gives its own.',
        examples: [null],
      }),
    created_at: z.iso.datetime().meta({ description: 'When it was created.', examples: [EXAMPLE_TIME] }),
    updated_at: z.iso.datetime().meta({ description: 'When it last changed.', examples: [EXAMPLE_TIME] }),
  })
  .meta({ description: 'A verification template.' });

export type TemplateWire = z.infer<typeof templateOutput>;

export const templateListOutput = z.object({
  results: z.array(templateOutput).meta({
    description: 'Every template of your team (at most 100), by name.',
    examples: [
      [
        {
          id: EXAMPLE_TEMPLATE_ID,
          name: 'helpdesk',
          verification_methods: { email: true, sms: true, government_id: true },
          locale: null,
          name_match: 'enforce',
          offer_passkey: false,
          custom_question_text: null,
          manager_name: null,
          manager_email: null,
          created_at: EXAMPLE_TIME,
          updated_at: EXAMPLE_TIME,
        },
      ],
    ],
  }),
});

export function toTemplateWire(template: TemplateRecord): TemplateWire {
  const shown = shownSettings(template.settings);
  return {
    id: template.id,
    name: template.name,
    verification_methods: Object.fromEntries(
      VERIFICATION_METHODS.filter((method) => template.methods[method] === true).map((method) => [
        method,
        true,
      ]),
    ),
    locale: template.locale,
    name_match: template.nameMatch,
    offer_passkey: template.offerPasskey,
    custom_question_text: shown.custom_question_text ?? null,
    manager_name: shown.manager_name ?? null,
    manager_email: shown.manager_email ?? null,
    created_at: template.createdAt.toISOString(),
    updated_at: template.updatedAt.toISOString(),
  };
}

/** A locale as a template keeps it: the supported locale a tag stands for. */
export function templateLocale(tag: string | null | undefined) {
  return tag ? supportedLocale(tag) : null;
}
