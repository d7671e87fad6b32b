import { z } from 'zod';
import { CASE_STATUSES, NAME_MATCH_MODES, VERIFICATION_METHODS } from '@/db/schema';
import { type CaseRecord, effectiveStatus, verificationUrl } from '@/server/cases/case-record';
import { EXAMPLE_CASE } from '@/server/cases/example-case';
import { supportedLocale } from '@/server/i18n/locales';
import { type Locale, SUPPORTED_LOCALES } from '@/server/i18n/supported-locales';
import { cursorInput, pageLinks } from '@/server/platform/pagination';
import { createdRange, emailAddress, jsonBoolean, requiredText } from '@/server/platform/wire-fields';
import { templateNameInput } from '@/server/templates/template-name';
import {
  METHOD_CREATE_FIELDS,
  methodFieldIssues,
  requestableMethodsDescription,
} from '@/server/verification/methods/creation';
import {
  EXAMPLE_VERIFICATION_METHODS,
  verificationMethodsOutput,
  verificationMethodsWire,
} from '@/server/verification/methods/outputs';
import { comparesNames, NAME_MATCH_WITHOUT_COMPARISON } from '@/server/verification/methods/registry';

/** The `{id}` of every case route. */
export const caseIdInput = z.object({
  id: z.string().meta({
    description:
      'The case’s `id` (a UUID, as create and the lists answer it), not the `public_id` of its link.',
    examples: [EXAMPLE_CASE.id],
  }),
});
/** A BCP 47 tag, turned into the supported locale it stands for, or refused naming them. */
/** A BCP 47 tag that stands for a supported locale (the case keeps that locale: supportedLocale). */
export const caseLocale = z
  .string()
  .max(35)
  .refine((tag) => supportedLocale(tag) !== null, {
    error: `must be one of the supported locales: ${SUPPORTED_LOCALES.join(', ')}`,
  });

/** The methods to request, as a case's and a template's body name them. A record (not an object) so that coercion is never applied and unknown keys are refused. */
export const verificationMethodsInput = z
  .partialRecord(z.enum(VERIFICATION_METHODS), jsonBoolean, {
    error: (issue) =>
      issue.code === 'invalid_type' && issue.input !== undefined
        ? 'must be an object naming each method to request, such as {"email": true, "sms": true}'
        : undefined,
  })
  // Only when the methods are otherwise right: after a misspelt method, "at least one must be
  // true" would send the client looking for a second mistake.
  .refine((methods) => Object.values(methods).some((v) => v === true), {
    error: 'request at least one method, such as {"email": true}',
    when: (payload) => payload.issues.length === 0,
  })
  .meta({
    description: `The steps the subject completes, each set to \`true\` to request it (at least one; each uses one unit of your plan). ${requestableMethodsDescription()} Or name a \`template\` instead.`,
    examples: [{ email: true, sms: true }],
  });

/**
 * What a document showing another name does to a case (the case's own, else its template's).
 * Shared with the templates' bodies.
 */
export const nameMatchInput = z
  .enum(NAME_MATCH_MODES)
  .optional()
  .meta({
    description:
      'With `government_id`: what a document showing another name than expected (`subject_name`, or the names an identity provider sent) does. `enforce` (the default) fails the case with `name_mismatch`; `record` lets it close and records the mismatch (`verification_methods.government_id.name_matched` false), for a team whose records may hold another spelling. A case naming a template takes the template’s unless it gives its own.',
    examples: ['record'],
  });

export const offerPasskeyInput = z
  .boolean()
  .optional()
  .meta({
    description:
      'Whether the subject is offered, once the case has closed, to save a passkey on its page: a later case of your team can then ask for `passkey` and verify them by it alone, in seconds. Default false; a case naming a template takes the template’s unless it gives its own.',
    examples: [true],
  });

/** name_match without a method that compares names: a field of a method the body does not request. */
export function nameMatchIssue(
  methods: Partial<Record<string, boolean>>,
  nameMatch: unknown,
): { field: string; message: string } | null {
  if (nameMatch === undefined || comparesNames(methods)) return null;
  return { field: 'name_match', message: NAME_MATCH_WITHOUT_COMPARISON };
}

export const createCaseInput = z
  .strictObject({
    subject_email: emailAddress.meta({
      description:
        'The person to verify: their verification link is mailed here, and opening it proves the `email` step. At most 254 characters.',
      examples: [EXAMPLE_CASE.subjectEmail],
    }),
    subject_name: requiredText(200)
      .nullish()
      .meta({
        description:
          'The subject’s name, as your records have it (optional, at most 200 characters); the manager’s request shows it. With `government_id`, the name on the document is compared with it (case, accents, hyphens and spacing aside, and a typo or two in a longer name; never fuzzy for Chinese, Japanese or Korean script): another name fails the case with `name_mismatch`, unless `name_match` is `record`. It stays as given; the document’s is `document_name`.',
        examples: ['Jane Doe'],
      }),
    name_match: nameMatchInput,
    offer_passkey: offerPasskeyInput,
    locale: caseLocale.nullish().meta({
      description: `The language the subject is addressed in, as a BCP 47 tag: one of ${SUPPORTED_LOCALES.join(', ')}, or a tag that falls back to one (\`de-AT\` is \`de\`, \`pt\` is \`pt-BR\`); the Case carries the supported locale it stands for. Optional: without it, the subject's browser language, then your team's default.`,
      examples: ['de'],
    }),
    verification_methods: verificationMethodsInput.optional(),
    template: templateNameInput.optional().meta({
      description:
        'A template of your team (`/v1/templates/`) by name, instead of `verification_methods`: the case requests its methods with its settings, and its locale unless the case names one. Fields the template leaves to each case (a manager, a custom question) are given here; a method field given here replaces the template’s. Give either `template` or `verification_methods`.',
      examples: ['helpdesk'],
    }),
    notes: z
      .string()
      .max(2000, { error: 'must be at most 2000 characters' })
      .default('')
      .meta({
        description:
          'Your team’s own note about the case (at most 2,000 characters); the subject never sees it.',
        examples: ['Contractor onboarding, badge 42'],
      }),
    // Each method's own fields (a custom question's text and answer, the manager's name and address).
    ...METHOD_CREATE_FIELDS,
  })
  .superRefine(
    (body, ctx) => {
      if (body.template !== undefined && body.verification_methods !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['template'],
          message: 'give either template or verification_methods, not both',
        });
        return;
      }
      if (body.template === undefined && body.verification_methods === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['verification_methods'],
          message: 'required (or name a template)',
        });
        return;
      }
      // With a template, its methods are known once it is read (server/templates/apply-template.ts).
      if (!body.verification_methods) return;
      const nameMatch = nameMatchIssue(body.verification_methods, body.name_match);
      for (const { field, message } of [
        ...methodFieldIssues(body.verification_methods, body, { everyCaseGivesThem: true }),
        ...(nameMatch ? [nameMatch] : []),
      ]) {
        ctx.addIssue({ code: 'custom', path: [field], message });
      }
    },
    // Which fields go with which method is only worth saying once the methods themselves are right
    // (and the body is an object at all).
    {
      when: (payload) =>
        !payload.issues.some((issue) =>
          issue.path?.length ? issue.path[0] === 'verification_methods' : issue.code === 'invalid_type',
        ),
    },
  );

export type CreateCaseInput = z.infer<typeof createCaseInput>;

export const listCasesInput = z.strictObject({
  status: z
    .enum(CASE_STATUSES)
    .meta({
      description: 'Only cases in this status (an open case past its expiry is already `expired`).',
      examples: ['open'],
    })
    .optional(),
  subject_email: z
    .string()
    .max(254)
    .meta({
      description: 'Only cases of this subject e-mail address, matched exactly.',
      examples: [EXAMPLE_CASE.subjectEmail],
    })
    .optional(),
  ...createdRange,
  cursor: cursorInput,
});

export type ListCasesInput = z.infer<typeof listCasesInput>;

export const caseOutput = z
  .object({
    id: z.uuid().meta({
      description: 'The case’s id: name the case by it in every API call.',
      examples: [EXAMPLE_CASE.id],
    }),
    public_id: z.string().meta({
      description:
        'The short id in the subject’s verification link (`/v/<public_id>`); the API names a case by `id`, not by this.',
      examples: [EXAMPLE_CASE.publicId],
    }),
    status: z.enum(CASE_STATUSES).meta({
      description:
        '`open` until every step passes (`closed`), one fails for good (`failed`), or time runs out or the team cancels it (`expired`). An ended case never changes again.',
      examples: ['open'],
    }),
    subject_email: z.string().meta({
      description:
        'Where the subject’s link was mailed; after redaction, the placeholder `redacted+<public_id>@redacted.invalid`.',
      examples: [EXAMPLE_CASE.subjectEmail],
    }),
    subject_name: z
      .string()
      .nullable()
      .meta({
        description:
          'The name given at creation, as given; a case given none takes the name on the ID document once checked. Null when neither, and after redaction.',
        examples: ['Jane Doe'],
      }),
    document_name: z
      .string()
      .nullable()
      .meta({
        description:
          'The name on the ID document, once the `government_id` step has read it (as the document shows it); null before, without that step, and after redaction.',
        examples: [null, 'Jane Doe'],
      }),
    name_match: z.enum(NAME_MATCH_MODES).meta({
      description:
        'What a document showing another name than expected does to this case: `enforce` fails it with `name_mismatch`, `record` lets it close and records the mismatch (`verification_methods.government_id.name_matched`).',
      examples: ['enforce'],
    }),
    offer_passkey: z.boolean().meta({
      description:
        'Whether the closed case offers its subject to save a passkey for a later re-verification (`passkey`).',
      examples: [false],
    }),
    locale: z
      .enum(SUPPORTED_LOCALES)
      .nullable()
      .meta({
        description:
          'The language the subject is addressed in, as given at creation (the supported locale it stands for), or null.',
        examples: ['de'],
      }),
    created_at: z
      .string()
      .meta({ description: 'When the case was opened (ISO 8601, UTC).', examples: [EXAMPLE_CASE.createdAt] }),
    expires_at: z.string().meta({
      description:
        'When the case expires if it is still open then: 48 hours after creation unless the operator set CASE_TTL_SECONDS.',
      examples: [EXAMPLE_CASE.expiresAt],
    }),
    is_expired: z
      .boolean()
      .meta({ description: 'True exactly when `status` is `expired`.', examples: [false] }),
    verification_url: z.string().meta({
      description:
        'The subject’s page, `{VERIFY_URL_BASE}/v/<public_id>`: where they take the steps that need no link of their own. Opening it proves nothing; the `email` step is proven only by the link mailed to the subject.',
      examples: [`https://vouch.example.com/v/${EXAMPLE_CASE.publicId}`],
    }),
    verification_methods: verificationMethodsOutput,
    notes: z.string().meta({
      description: 'Your team’s note, as given at creation (empty when none; erased by redaction).',
      examples: ['Contractor onboarding, badge 42'],
    }),
    external_ref: z
      .string()
      .nullable()
      .meta({
        description:
          'Who the case is about in the system that opened it: for a case an identity provider started (Okta, any OIDC relying party), the `login_hint` it sent (its user’s id); null otherwise.',
        examples: [null, '00u1a2b3c4d5e6f7g8h9'],
      }),
    failure_reason: z
      .string()
      .nullable()
      .meta({
        description:
          'Why a `failed` case failed: `government_id_rejected`, `selfie_rejected`, `manager_declined`, `custom_question_failed`, `sms_code_failed`, or `name_mismatch` (the ID document shows another name than `subject_name` or the names an identity provider sent, and `name_match` is `enforce`); null otherwise.',
        examples: [null, 'manager_declined'],
      }),
    livemode: z.boolean().meta({
      description: 'False for a case made with a test key (`vouch_test_…`).',
      examples: [true],
    }),
    canceled_at: z
      .string()
      .nullable()
      .meta({
        description: 'When the team canceled the case (its status is then `expired`); null otherwise.',
        examples: [null],
      }),
    redacted_at: z
      .string()
      .nullable()
      .meta({
        description:
          'When the subject’s personal data was erased (`POST /v1/cases/{id}/redact/`); the status, ids and results stay. Null otherwise.',
        examples: [null],
      }),
  })
  .meta({ id: 'Case' });

export type CaseWire = z.infer<typeof caseOutput>;

/** A case as the document's examples show it: just opened, its e-mail step done. */
export const EXAMPLE_CASE_WIRE: CaseWire = {
  id: EXAMPLE_CASE.id,
  public_id: EXAMPLE_CASE.publicId,
  status: 'open',
  subject_email: EXAMPLE_CASE.subjectEmail,
  subject_name: 'Jane Doe',
  document_name: null,
  name_match: 'enforce',
  offer_passkey: false,
  locale: null,
  created_at: EXAMPLE_CASE.createdAt,
  expires_at: EXAMPLE_CASE.expiresAt,
  is_expired: false,
  verification_url: `https://vouch.example.com/v/${EXAMPLE_CASE.publicId}`,
  verification_methods: EXAMPLE_VERIFICATION_METHODS as CaseWire['verification_methods'],
  notes: '',
  external_ref: null,
  failure_reason: null,
  livemode: true,
  canceled_at: null,
  redacted_at: null,
};

export const caseListOutput = z
  .object({
    ...pageLinks('/v1/cases/'),
    results: z.array(caseOutput).meta({
      description: 'Up to 50 cases, newest first.',
      examples: [[EXAMPLE_CASE_WIRE]],
    }),
  })
  .meta({ id: 'CaseList' });

/** What a case's wire form depends on beside the case: the time (open past its deadline reads as expired) and the pages' base. */
export interface WireContext {
  now: Date;
  pageBase: string;
}

export function toCaseWire(record: CaseRecord, { now, pageBase }: WireContext): CaseWire {
  const status = effectiveStatus(record, now);
  return {
    id: record.id,
    public_id: record.publicId,
    status,
    subject_email: record.subjectEmail,
    subject_name: record.subjectName,
    document_name: record.documentName,
    name_match: record.nameMatch,
    offer_passkey: record.offerPasskey,
    locale: (record.locale as Locale | null) ?? null,
    created_at: record.createdAt.toISOString(),
    expires_at: record.expiresAt.toISOString(),
    is_expired: status === 'expired',
    verification_url: verificationUrl(pageBase, record.publicId),
    verification_methods: verificationMethodsWire(record.steps),
    notes: record.notes,
    external_ref: record.externalRef,
    failure_reason: record.failureReason,
    livemode: record.livemode,
    canceled_at: record.canceledAt?.toISOString() ?? null,
    redacted_at: record.redactedAt?.toISOString() ?? null,
  };
}

/** The most cases one batch request may create. */
export const CASE_BATCH_MAX = 100;

/**
 * A batch's items as the document shows them: each is exactly the body of a single create. The
 * schema checks only that there are 1 to 100; each item is parsed alone afterwards, so that a bad
 * item is that item's error and never its neighbours'.
 */
const CREATE_BODY_DOCUMENT = z.toJSONSchema(createCaseInput, { io: 'input', unrepresentable: 'any' });
delete CREATE_BODY_DOCUMENT.$schema;

export const caseBatchInput = z.strictObject({
  cases: z
    .array(
      z.unknown().meta({
        override: ({ jsonSchema }) => Object.assign(jsonSchema, CREATE_BODY_DOCUMENT),
      }),
    )
    .min(1)
    .max(CASE_BATCH_MAX)
    .meta({
      description: `1 to ${CASE_BATCH_MAX} cases, each exactly the body of a single create.`,
      examples: [
        [
          { subject_email: EXAMPLE_CASE.subjectEmail, verification_methods: { email: true } },
          { subject_email: 'sam@acme.example', verification_methods: { email: true, sms: true } },
        ],
      ],
    }),
});

export type CaseBatchInput = z.infer<typeof caseBatchInput>;

const BATCH_ITEM_ERROR_EXAMPLE = {
  error: 'validation_error',
  detail: 'subject_email: must be an e-mail address, such as jane@acme.example',
  code: 'VALIDATION_ERROR',
};

const itemError = z
  .strictObject({
    error: z.string().meta({ description: 'The code in lower case.', examples: ['insufficient_allowance'] }),
    detail: z.string().meta({
      description: 'What went wrong with this item, in words a person can act on.',
      examples: ['subject_email: must be an e-mail address, such as jane@acme.example'],
    }),
    code: z.string().meta({
      description:
        'As a single create would answer it: VALIDATION_ERROR, TRIAL_EXPIRED, INSUFFICIENT_ALLOWANCE.',
      examples: ['INSUFFICIENT_ALLOWANCE'],
    }),
  })
  .meta({
    description: "The item's error, in the API's error shape.",
    examples: [BATCH_ITEM_ERROR_EXAMPLE],
  });

export const caseBatchOutput = z.strictObject({
  results: z
    .array(
      z.union([
        z.strictObject({
          case: caseOutput.meta({
            description: 'The case this item created.',
            examples: [EXAMPLE_CASE_WIRE],
          }),
        }),
        z.strictObject({
          error: itemError,
          status: z
            .number()
            .int()
            .meta({
              description: 'The HTTP status a single create would have answered this item with.',
              examples: [422],
            }),
        }),
      ]),
    )
    .meta({
      description: 'One result per item, in the order given: the case created, or the item’s error.',
      examples: [[{ case: EXAMPLE_CASE_WIRE }, { error: BATCH_ITEM_ERROR_EXAMPLE, status: 422 }]],
    }),
});

export type CaseBatchResult = z.infer<typeof caseBatchOutput>['results'][number];

/** A case's evidence record as served: a JWS in flattened JSON serialization (RFC 7515 §7.2.2). */
export const flattenedJwsOutput = z
  .object({
    payload: z.string().meta({
      description: 'The record: base64url of its RFC 8785 canonical JSON (UTF-8).',
      examples: ['eyJhdWRpdCI6eyJlbnRyaWVzIjpbXSwicGVuZGluZyI6W10sInNlYWxlZF90aHJvdWdoIjpudWxsfX0'],
    }),
    protected: z.string().meta({
      description:
        'base64url of the protected header: `{"alg":"EdDSA","kid":…,"typ":"vouch-evidence+json"}`.',
      examples: [
        'eyJhbGciOiJFZERTQSIsImtpZCI6IlF1YkJwMEF3c2RHN3ZWbWNfTmZVUjlFNmlLZ3dYTUxfeUp1SXR0R0RJRTQiLCJ0eXAiOiJ2b3VjaC1ldmlkZW5jZStqc29uIn0',
      ],
    }),
    signature: z.string().meta({
      description: 'base64url of the Ed25519 signature.',
      examples: ['3pW1b5n1Zl0m7bq2mY8C2kq1o1w0VqQ7cK8zq0w3yJ0u2fZ3b6n5Yk2d4P9v1s0r8t7q6p5o4n3m2l1k0j9i8hA'],
    }),
  })
  .meta({ description: 'A signed evidence record.' });
