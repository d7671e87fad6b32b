import { createHmac, timingSafeEqual } from 'node:crypto';
import AxeBuilder from '@axe-core/playwright';
import { test as base, expect, type Page } from '@playwright/test';
import { eq } from 'drizzle-orm';
import { connectDatabase, type Database } from '../../db/client';
import { cases } from '../../db/schema';
import { systemClock } from '../../server/platform/clock';
import { createTeam } from '../../server/teams/manage-teams';
import { apiClient } from '../../test/support/api-client';
import { type ReceivedRequest, webhookProblems } from '../../test/support/https-receiver';
import type { ReceivedMail } from '../../test/support/smtp-inbox';
import type { TwilioMessage } from '../../test/support/twilio-stand-in';

export interface CaseWire {
  id: string;
  public_id: string;
  status: string;
  subject_name: string | null;
  verification_url: string;
  failure_reason: string | null;
  verification_methods: Record<
    string,
    { requested: boolean; verified: boolean; phone_last4?: string | null }
  >;
}

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run through e2e/playwright.config.ts (global setup)`);
  return value;
};

async function poll<T>(what: string, read: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * A picture to upload: a PNG signature followed by the simulated identity provider's documented
 * test markers (none: a document that passes).
 */
export const markedPng = (name: string, marker = '') => ({
  name,
  mimeType: 'image/png',
  buffer: Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from(marker)]),
});

export function uniqueEmail(label: string): string {
  return `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}@e2e.test`;
}

/** The first URL in a mail body that starts with `prefix`. */
export function linkIn(mail: ReceivedMail, prefix: string): string {
  const url = mail.text.split(/\s+/).find((word) => word.startsWith(prefix));
  if (!url) throw new Error(`no ${prefix} link in mail:\n${mail.text}`);
  return url;
}

export async function expectAccessible(page: Page): Promise<void> {
  const results = await new AxeBuilder({ page }).analyze();
  expect(
    results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
  ).toEqual([]);
}

type Fixtures = {
  baseUrl: string;
  vouch: {
    createCase: (body: Record<string, unknown>) => Promise<CaseWire>;
    getCase: (id: string) => Promise<CaseWire>;
    waitForMail: (to: string, subject?: RegExp, text?: RegExp) => Promise<ReceivedMail>;
    waitForSms: (to: string, count?: number) => Promise<TwilioMessage>;
    expireCase: (id: string) => Promise<void>;
    /** Waits until the team's webhook receiver got these event types for the case, signatures checked. */
    waitForEvents: (caseId: string, types: string[]) => Promise<WebhookEvent[]>;
  };
};

export interface WebhookEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

type WorkerFixtures = { database: Database; apiKey: string; webhook: { path: string; secret: string } };

export const test = base.extend<Fixtures, WorkerFixtures>({
  database: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright fixtures take their dependencies by destructuring
    async ({}, use) => {
      const database = connectDatabase(env('E2E_DATABASE_URL'), { max: 2 });
      await use(database);
      await database.close();
    },
    { scope: 'worker' },
  ],
  apiKey: [
    async ({ database }, use, workerInfo) => {
      const { key } = await createTeam(
        database.db,
        {
          name: `Acme ${workerInfo.project.name} ${workerInfo.workerIndex}`,
          adminEmail: uniqueEmail('admin'),
          planCode: 'enterprise',
        },
        systemClock,
      );
      await use(key.token);
    },
    { scope: 'worker' },
  ],
  webhook: [
    async ({ apiKey }, use, workerInfo) => {
      const path = `/hooks/${workerInfo.project.name}-${workerInfo.workerIndex}-${Date.now()}`;
      const res = await apiClient(env('E2E_BASE_URL'), apiKey).post<{ secret: string }>(
        '/v1/webhooks/endpoints/',
        {
          url: `${env('E2E_WEBHOOK_RECEIVER')}${path}`,
          events: [
            'case.created',
            'case.closed',
            'case.failed',
            'case.expired',
            'verification.step_completed',
          ],
        },
      );
      expect(res.status, res.text).toBe(201);
      await use({ path, secret: res.body.secret });
      // Every webhook this worker's tests were sent, late ones included, matches the document.
      const received = (
        (await (await fetch(`${env('E2E_INSPECT_URL')}/webhooks`)).json()) as ReceivedRequest[]
      ).filter((r) => r.path === path);
      expect(webhookProblems(received), 'webhooks that /v1/openapi.json does not describe').toEqual([]);
    },
    { scope: 'worker' },
  ],
  // biome-ignore lint/correctness/noEmptyPattern: see above
  baseUrl: async ({}, use) => use(env('E2E_BASE_URL')),
  vouch: async ({ apiKey, baseUrl, database, webhook }, use) => {
    const api = apiClient(baseUrl, apiKey);
    const inspect = env('E2E_INSPECT_URL');
    await use({
      async createCase(body) {
        const res = await api.post<CaseWire>('/v1/cases/', body);
        expect(res.status, res.text).toBe(201);
        return res.body;
      },
      async getCase(id) {
        const res = await api.get<CaseWire>(`/v1/cases/${id}/`);
        expect(res.status, res.text).toBe(200);
        return res.body;
      },
      waitForMail: (to, subject, text) =>
        poll(`mail to ${to}`, async () => {
          const mails = (await (await fetch(`${inspect}/mail`)).json()) as ReceivedMail[];
          return mails.find(
            (m) => m.to.includes(to) && (!subject || subject.test(m.subject)) && (!text || text.test(m.text)),
          );
        }),
      waitForSms: (to, count = 1) =>
        poll(`text ${count} to ${to}`, async () => {
          const texts = ((await (await fetch(`${inspect}/sms`)).json()) as TwilioMessage[]).filter(
            (t) => t.to === to,
          );
          return texts.length >= count ? texts[count - 1] : undefined;
        }),
      waitForEvents: (caseId, types) =>
        poll(
          `webhooks ${types.join(', ')} for case ${caseId}`,
          async () => {
            const requests = (
              (await (await fetch(`${inspect}/webhooks`)).json()) as ReceivedRequest[]
            ).filter((r) => r.path === webhook.path);
            const events: WebhookEvent[] = [];
            for (const request of requests) {
              const expected = Buffer.from(
                `sha256=${createHmac('sha256', webhook.secret).update(request.body).digest('hex')}`,
              );
              const sent = Buffer.from(String(request.headers['x-service-signature']));
              expect(
                sent.length === expected.length && timingSafeEqual(sent, expected),
                'webhook signature',
              ).toBe(true);
              const event = JSON.parse(request.body) as WebhookEvent;
              if (event.data.case_id !== caseId) continue;
              expect(webhookProblems([request]), 'webhooks that /v1/openapi.json does not describe').toEqual(
                [],
              );
              events.push(event);
            }
            const seen = events.map((e) => e.type);
            return types.every((t) => seen.includes(t)) ? events : undefined;
          },
          30_000,
        ),
      async expireCase(id) {
        await database.db
          .update(cases)
          .set({ expiresAt: new Date(Date.now() - 1000) })
          .where(eq(cases.id, id));
      },
    });
  },
});

export { expect };
