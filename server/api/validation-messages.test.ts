import { describe, expect, it } from 'vitest';
import { type ZodError, z } from 'zod';
import { REST_ROUTES } from '@/server/api/rest/routes';
import { appRouter } from '@/server/api/trpc/root';
import { simulateCaseInput } from '@/server/application/cases/simulate-case';
import { createCaseInput, listCasesInput } from '@/server/application/cases/wire';
import { EXAMPLE_CASE } from '@/server/cases/example-case';
import { listEventsInput } from '@/server/events/wire';
import { createEndpointInput, updateEndpointInput } from '@/server/webhooks/wire';
import { toWireError } from './error-table';
import { bodyNotAnObjectMessage } from './validation-messages';

type Parsable = { safeParse: (input: unknown) => { error?: ZodError } };

/** The `detail` a client gets for `input` against `schema` (the schemas the API really uses). */
function detailFor(schema: Parsable, input: unknown): string {
  const { error } = schema.safeParse(input);
  if (!error) throw new Error('the input was accepted');
  const wire = toWireError(error);
  expect(wire.status).toBe(422);
  expect(wire.body.code).toBe('VALIDATION_ERROR');
  return wire.body.detail;
}

const METHODS_LIST = 'email, sms, government_id, selfie, custom_question, manager, passkey';
const valid = { subject_email: 'a@example.test', verification_methods: { email: true } };

describe('validation messages', () => {
  it('says "required" for a missing field', () => {
    expect(detailFor(createCaseInput, { verification_methods: { email: true } })).toBe(
      'subject_email: required',
    );
    expect(detailFor(createCaseInput, { subject_email: 'a@example.test' })).toBe(
      'verification_methods: required (or name a template)',
    );
  });

  it('says what is wrong with a field that is present, and what it takes', () => {
    expect(detailFor(createCaseInput, { ...valid, subject_email: 'nope' })).toBe(
      'subject_email: must be an e-mail address, such as jane@acme.example',
    );
    expect(detailFor(createCaseInput, { ...valid, notes: 5 })).toBe('notes: must be text, not a number');
    expect(detailFor(createCaseInput, { ...valid, subject_name: [] })).toBe(
      'subject_name: must be text, not a list',
    );
    expect(detailFor(listCasesInput, { status: 'bogus' })).toBe(
      'status: must be one of open, closed, failed, expired, not "bogus"',
    );
    expect(detailFor(listCasesInput, { cursor: 'c'.repeat(201) })).toBe(
      'cursor: must be at most 200 characters',
    );
    expect(detailFor(simulateCaseInput, { id: EXAMPLE_CASE.id })).toBe(
      'action: required: one of complete_step, fail_step, expire',
    );
  });

  it('explains verification_methods of the wrong shape in its own terms', () => {
    for (const methods of [['email'], 'email', null, 3]) {
      expect(detailFor(createCaseInput, { ...valid, verification_methods: methods })).toBe(
        'verification_methods: must be an object naming each method to request, such as {"email": true, "sms": true}',
      );
    }
    expect(detailFor(createCaseInput, { ...valid, verification_methods: { email: false } })).toBe(
      'verification_methods: request at least one method, such as {"email": true}',
    );
  });

  it('lists the valid methods and guesses a near miss, once, with no second misleading clause', () => {
    expect(detailFor(createCaseInput, { ...valid, verification_methods: { emial: true } })).toBe(
      `verification_methods: unknown method "emial" (did you mean "email"?); the methods are ${METHODS_LIST}`,
    );
    // No guess when nothing is close.
    expect(
      detailFor(createCaseInput, { ...valid, verification_methods: { email: true, fingerprint: true } }),
    ).toBe(`verification_methods: unknown method "fingerprint"; the methods are ${METHODS_LIST}`);
    // The manager's fields are not "only accepted when manager is requested": the method is misspelt.
    expect(
      detailFor(createCaseInput, {
        ...valid,
        verification_methods: { manegr: true },
        manager_name: 'Mia',
        manager_email: 'mia@acme.example',
      }),
    ).toBe(
      `verification_methods: unknown method "manegr" (did you mean "manager"?); the methods are ${METHODS_LIST}`,
    );
  });

  it('names the nearest field for a misspelt one, and says where a likely guess goes', () => {
    expect(detailFor(createCaseInput, { ...valid, subject_emial: 'a@example.test' })).toBe(
      'unknown field "subject_emial" (did you mean "subject_email"?)',
    );
    expect(detailFor(createCaseInput, { ...valid, subjectName: 'Jane' })).toBe(
      'unknown field "subjectName" (did you mean "subject_name"?)',
    );
    expect(detailFor(createCaseInput, { ...valid, subject_phone: '+14155550100' })).toBe(
      'unknown field "subject_phone": the subject types their phone number on the verification page, so none is sent here; request "sms": true in verification_methods',
    );
    expect(
      detailFor(createEndpointInput, { url: 'https://hooks.acme.example/', enabled_events: ['*'] }),
    ).toBe(
      'unknown field "enabled_events": the event types go in events, a list such as ["case.closed", "case.failed"]',
    );
    expect(detailFor(updateEndpointInput, { id: 'x', enabled: false })).toBe(
      'unknown field "enabled": switch an endpoint on or off with is_active: true or false',
    );
    expect(detailFor(listEventsInput, { event_type: 'case.closed' })).toBe(
      'unknown parameter "event_type": filter by event type with type, such as case.closed',
    );
    // Nothing close and no likely guess: the accepted names, once.
    expect(detailFor(createCaseInput, { ...valid, colour: 'blue', size: 2 })).toBe(
      'unknown fields "colour", "size"; the fields are subject_email, subject_name, name_match, offer_passkey, locale, verification_methods, template, notes, custom_question_text, custom_question_answer, manager_name, manager_email',
    );
  });

  it('explains that dates need a time zone', () => {
    expect(detailFor(listCasesInput, { created_after: '2026-01-01T00:00:00' })).toBe(
      'created_after: must be an ISO 8601 date-time with a time zone, such as 2026-01-31T09:00:00Z or 2026-01-31T10:00:00+01:00',
    );
    expect(listCasesInput.safeParse({ created_after: '2026-01-01T00:00:00Z' }).success).toBe(true);
  });

  it('explains that the page size is fixed', () => {
    expect(detailFor(listCasesInput, { limit: '10' })).toBe(
      'unknown parameter "limit": every page holds up to 50 results, a fixed size; follow the page’s next link for more',
    );
    expect(detailFor(listCasesInput, { colour: 'blue' })).toBe(
      'unknown parameter "colour"; the parameters are status, subject_email, created_after, created_before, cursor',
    );
  });

  it('says that a body must be an object', () => {
    expect(bodyNotAnObjectMessage({})).toBeNull();
    expect(bodyNotAnObjectMessage([valid])).toBe(
      'The request body must be a JSON object, such as {"subject_email": "jane@acme.example"}, not a list.',
    );
    expect(bodyNotAnObjectMessage('hello')).toMatch(/not text\.$/);
    expect(bodyNotAnObjectMessage(null)).toMatch(/not null\.$/);
  });
});

/** The validator's own phrasing, which no client should read. */
const RAW_ZOD =
  /expected|received|Invalid option|Invalid input|Too (big|small)|Unrecognized key|Invalid (string|format)/;

/** Values of every JSON type, a few wrong shapes of right types, and nested wrong values. */
const WRONG_VALUES: unknown[] = [
  null,
  0,
  -1.5,
  true,
  false,
  '',
  ' ',
  'wrong',
  'x'.repeat(3000),
  '2026-01-01',
  [],
  ['wrong'],
  [null],
  [1],
  {},
  { wrong: true },
  { email: 'wrong' },
  { email: null },
  { email: false },
];

/**
 * Each published operation's input schema. tRPC has no public accessor for a procedure's parser,
 * so this test reads its definition; it fails (covering no input) if tRPC moves it.
 */
const inputsByRoute = new Map(
  Object.values(
    appRouter._def.procedures as unknown as Record<
      string,
      { _def: { inputs: z.ZodType[]; meta?: { openapi?: { method: string; path: string } } } }
    >,
  ).flatMap(({ _def }) =>
    _def.meta?.openapi ? [[`${_def.meta.openapi.method} ${_def.meta.openapi.path}`, _def.inputs[0]]] : [],
  ),
);

/** Every input the REST API publishes, as its procedure parses it. */
const publicInputs = REST_ROUTES.flatMap((route) => {
  const input = inputsByRoute.get(`${route.method} ${route.path}`);
  return input instanceof z.ZodObject ? [{ route: `${route.method} ${route.path}`, input }] : [];
});

describe('every public input, every field, every wrong type', () => {
  it('covers the inputs of every operation that takes one', () => {
    expect(publicInputs.map((p) => p.route)).toEqual(
      expect.arrayContaining([
        'POST /cases/',
        'GET /cases/',
        'POST /cases/{id}/simulate/',
        'POST /cases/{id}/resend/',
        'POST /webhooks/endpoints/',
        'PATCH /webhooks/endpoints/{id}/',
        'GET /webhooks/deliveries/',
        'POST /webhooks/endpoints/{id}/recover/',
        'GET /events/',
      ]),
    );
  });

  for (const { route, input } of publicInputs) {
    it(`${route}: plain words, each field once`, () => {
      const bodies: unknown[] = [null, [], 'text', 42, { subject_phone: '+1', colour: 'blue', limit: 5 }];
      for (const field of Object.keys(input.shape)) {
        for (const value of WRONG_VALUES) bodies.push({ [field]: value });
      }
      for (const body of bodies) {
        const { error } = input.safeParse(body);
        if (!error) continue;
        const detail = toWireError(error).body.detail;
        const context = `${route} ${JSON.stringify(body).slice(0, 80)} → ${detail}`;
        expect(detail, context).not.toMatch(RAW_ZOD);
        // One clause per field: "field: …" never twice.
        const fields = detail
          .split('; ')
          .map((part) => /^([\w.[\]]+): /.exec(part)?.[1])
          .filter(Boolean);
        expect(new Set(fields).size, context).toBe(fields.length);
      }
    });
  }
});
