/** The sample values the OpenAPI document shows, the same wherever a case appears. */
export const EXAMPLE_CASE = {
  id: '0b9e4c5e-3f1a-4d2b-9c8e-5a7f6d2e1b3c',
  publicId: 'k3Jq9TzX2bLm8WvR',
  createdAt: '2026-01-31T09:00:00.000Z',
  expiresAt: '2026-02-02T09:00:00.000Z',
  subjectEmail: 'jane@acme.example',
} as const;
