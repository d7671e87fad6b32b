import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import claimsSchema from './ekyc-ida/claims_schema.json' with { type: 'json' };
import verifiedClaimsSchema from './ekyc-ida/verified_claims.json' with { type: 'json' };
import verifiedClaimsRequestSchema from './ekyc-ida/verified_claims_request.json' with { type: 'json' };

/**
 * The OpenID Foundation's JSON schemas of OpenID Connect for Identity Assurance (copied verbatim
 * from openid/eKYC-IDA at commit b4109086d8a186d5ab59375ca6ab7f7ac7e370b5, schema/: see
 * ekyc-ida/README.md), compiled once: what the tests hold every issued `verified_claims`, and the
 * requests the guides show, to.
 */
const ajv = new Ajv2020({
  allErrors: true,
  // The schemas are the working group's, as published: their own style is not ours to police.
  strict: false,
  schemas: [claimsSchema, verifiedClaimsRequestSchema],
});
addFormats(ajv);

const response = ajv.compile(verifiedClaimsSchema);
const request = ajv.compile(verifiedClaimsRequestSchema);

function problems(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message ?? error.keyword}`);
}

/**
 * What is wrong with `claims` (an ID token's payload, or a UserInfo answer) under verified_claims.json:
 * nothing when it holds.
 */
export function verifiedClaimsProblems(claims: unknown): string[] {
  return response(claims) ? [] : problems(response.errors);
}

/** What is wrong with a `claims` request parameter under verified_claims_request.json. */
export function verifiedClaimsRequestProblems(claims: unknown): string[] {
  return request(claims) ? [] : problems(request.errors);
}
