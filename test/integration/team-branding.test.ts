/**
 * A team's brand (issue 28, decisions: "Languages and branding"): owners and admins set the name,
 * default language, colour, support line and logo in the console, each change audited; refused
 * values say why; the logo is re-encoded and served from our origin; the subject's pages, mails and
 * texts carry all of it, test mode included; the console's preview draws the real page and mail.
 */
import { createHash } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLog, devMailbox } from '@/db/schema';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { type ConsoleClient, consoleClient, signInReplacingPassword } from '@/test/support/console-client';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { eventually } from '@/test/support/https-receiver';
import { inviteNewUser } from '@/test/support/invitations';
import { openSubjectPage, postSubjectForm } from '@/test/support/subject-page';

type Branding = {
  display_name: string | null;
  default_locale: string | null;
  brand_color: string | null;
  support_line: string | null;
  shown_name: string;
  logo: { digest: string; width: number; height: number; path: string } | null;
};

let database: TestDatabase;
let app: RunningApp;
let owner: ConsoleClient;
let viewer: ConsoleClient;
let teamId: string;
let testKey: string;

const SETTINGS = {
  display_name: 'Initech IT',
  default_locale: 'fr',
  brand_color: '#0B6B2E',
  support_line: 'Questions? Contact IT at +1 555 0100',
};

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({ databaseUrl: database.url });
  const created = await createTeam(
    database.db,
    { name: 'Initech Corporation', adminEmail: 'owner@initech.test' },
    systemClock,
  );
  teamId = created.team.id;
  testKey = created.testKey.token;
  owner = await signInReplacingPassword(
    consoleClient(app.baseUrl),
    'owner@initech.test',
    created.owner.oneTimePassword,
    'initech-owner-password-1',
  );
  viewer = consoleClient(app.baseUrl);
  await inviteNewUser(owner, viewer, database.db, { email: 'viewer@initech.test', role: 'viewer' });
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

function auditActions() {
  return database.db
    .select({ action: auditLog.action, details: auditLog.details })
    .from(auditLog)
    .where(eq(auditLog.teamId, teamId));
}

async function picture(
  format: 'png' | 'jpeg' | 'webp' | 'gif',
  width: number,
  height: number,
): Promise<Buffer> {
  const canvas = sharp({ create: { width, height, channels: 3, background: '#0b6b2e' } });
  if (format === 'jpeg')
    return canvas
      .jpeg()
      .withMetadata({ exif: { IFD0: { Copyright: 'Initech secret' } } })
      .toBuffer();
  return canvas[format]().toBuffer();
}

const upload = (client: ConsoleClient, file: Buffer) =>
  client.mutate<Branding>('console.team.uploadLogo', { file_base64: file.toString('base64') });

describe('the Branding settings', () => {
  it('refuses a colour white text cannot be read on, saying the contrast it reaches', async () => {
    const refused = await owner.mutate('console.team.setBranding', { ...SETTINGS, brand_color: '#ffcc00' });
    expect(refused.status).toBe(400);
    expect(refused.error?.message).toMatch(/reaches only 1\.\d\d:1 contrast .* WCAG AA needs 4\.5:1/);
  });

  it('refuses a name over 30 characters and a support line of several lines', async () => {
    expect(
      (await owner.mutate('console.team.setBranding', { ...SETTINGS, display_name: 'x'.repeat(31) })).status,
    ).toBe(400);
    expect(
      (await owner.mutate('console.team.setBranding', { ...SETTINGS, support_line: 'Call us\nor not' }))
        .status,
    ).toBe(400);
  });

  it('keeps what an owner saves, audited; a viewer reads it and may not change it', async () => {
    const saved = await owner.mutate<Branding>('console.team.setBranding', SETTINGS);
    expect(saved.status, JSON.stringify(saved.error)).toBe(200);
    expect(saved.data).toMatchObject({
      ...SETTINGS,
      brand_color: '#0b6b2e',
      shown_name: 'Initech IT',
      logo: null,
    });
    const audited = (await auditActions()).filter((entry) => entry.action === 'team.branding_changed');
    expect(audited.at(-1)?.details).toEqual({
      display_name: 'Initech IT',
      default_locale: 'fr',
      brand_color: '#0b6b2e',
      support_line: SETTINGS.support_line,
    });
    expect((await viewer.query<Branding>('console.team.branding')).data?.shown_name).toBe('Initech IT');
    expect((await viewer.mutate('console.team.setBranding', SETTINGS)).status).toBe(403);
    expect((await upload(viewer, await picture('png', 10, 10))).status).toBe(403);
  });
});

describe('the logo', () => {
  it('takes PNG, JPEG and WebP, re-encoded as PNG without the file’s metadata, served from our origin for good', async () => {
    for (const format of ['png', 'webp', 'jpeg'] as const) {
      const file = await picture(format, 320, 120);
      const answer = await upload(owner, file);
      expect(answer.status, `${format}: ${JSON.stringify(answer.error)}`).toBe(200);
      const logo = answer.data?.logo;
      expect(logo).toMatchObject({
        width: 320,
        height: 120,
        path: `/brand-logos/${teamId}/${logo?.digest}.png`,
      });
      const served = await fetch(`${app.baseUrl}${logo?.path}`);
      expect(served.status).toBe(200);
      expect(served.headers.get('content-type')).toBe('image/png');
      expect(served.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(served.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
      const bytes = Buffer.from(await served.arrayBuffer());
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(logo?.digest);
      const metadata = await sharp(bytes).metadata();
      expect(metadata).toMatchObject({ format: 'png', width: 320, height: 120 });
      expect(metadata.exif).toBeUndefined();
      expect(bytes.includes(Buffer.from('Initech secret'))).toBe(false);
    }
    const actions = (await auditActions()).map((entry) => entry.action);
    expect(actions.filter((action) => action === 'team.logo_changed')).toHaveLength(3);
  });

  it('refuses SVG, GIF, a file over 200 KB, a picture over 1024 px and bytes that are no picture, saying why', async () => {
    const svg = Buffer.from(
      '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>',
    );
    // About 270 KB: pixels that do not compress, stored without compression.
    const noisy = await sharp(
      Buffer.from(Array.from({ length: 300 * 300 * 3 }, (_, i) => (i * 7919) % 251)),
      {
        raw: { width: 300, height: 300, channels: 3 },
      },
    )
      .png({ compressionLevel: 0 })
      .toBuffer();
    for (const [file, why] of [
      [svg, /PNG, JPEG or WebP picture \(this file is SVG\)/],
      [await picture('gif', 10, 10), /this file is GIF/],
      [noisy, /at most 200 KB; this file is \d+ KB/],
      [await picture('png', 1025, 40), /at most 1024 × 1024 pixels; this one is 1025 × 40/],
      [Buffer.from('not a picture at all'), /not a picture we can read/],
    ] as const) {
      const refused = await upload(owner, file);
      expect(refused.status).toBe(422);
      expect(refused.error?.message).toMatch(why);
    }
    // Over twice the limit: refused before it is decoded, with the limit.
    const huge = await upload(owner, Buffer.alloc(500 * 1024, 1));
    expect(huge.status).toBe(400);
    expect(huge.error?.message).toMatch(/at most 200 KB/);
  });

  it('a replaced or removed logo’s address names nothing', async () => {
    const first = (await upload(owner, await picture('png', 100, 50))).data?.logo?.path;
    const second = (await upload(owner, await picture('png', 200, 50))).data?.logo?.path;
    expect(first).not.toBe(second);
    expect((await fetch(`${app.baseUrl}${first}`)).status).toBe(404);
    expect((await fetch(`${app.baseUrl}${second}`)).status).toBe(200);
    expect((await owner.mutate<Branding>('console.team.removeLogo')).data?.logo).toBeNull();
    expect((await fetch(`${app.baseUrl}${second}`)).status).toBe(404);
    expect((await fetch(`${app.baseUrl}/brand-logos/${teamId}/..%2F..%2Fetc.png`)).status).toBe(404);
    expect((await auditActions()).some((entry) => entry.action === 'team.logo_removed')).toBe(true);
  });
});

describe('what subjects see', () => {
  it('pages, mails and texts of a test-mode case carry the name, language, colour, logo and support line', async () => {
    const logo = (await upload(owner, await picture('png', 240, 80))).data?.logo;
    const test = apiClient(app.baseUrl, testKey);
    const created = await test.post<{ verification_url: string; id: string }>('/v1/cases/', {
      subject_email: 'peter@initech.test',
      verification_methods: { email: true, sms: true },
    });
    expect(created.status, created.text).toBe(201);
    const url = created.body.verification_url;

    const page = await fetch(url);
    const html = await page.text();
    expect(html).toContain('<html lang="fr" dir="ltr">');
    expect(html).toMatch(new RegExp(`<img class="logo" src="${logo?.path}" alt="[^"]*Initech IT[^"]*">`));
    expect(html).toContain('<bdi class="brand-name">Initech IT</bdi>');
    expect(html).toContain(`<p class="support"><bdi>${SETTINGS.support_line}</bdi></p>`);
    const colour = ':root{--accent:#0b6b2e}';
    expect(html).toContain(`<style>${colour}</style>`);
    const hash = `'sha256-${createHash('sha256').update(colour).digest('base64')}'`;
    expect(page.headers.get('content-security-policy')).toContain(hash);

    const mail = await eventually(async () => {
      const [row] = await database.db
        .select()
        .from(devMailbox)
        .where(and(eq(devMailbox.to, 'peter@initech.test')));
      return row;
    }, 15_000);
    expect(mail.language).toBe('fr');
    expect(mail.subject).toContain('Initech IT');
    expect(mail.html).toContain(`src="${app.baseUrl}${logo?.path}"`);
    expect(mail.html).toContain('background:#0b6b2e');
    expect(mail.text).toContain(SETTINGS.support_line);

    const opened = await openSubjectPage(url);
    await postSubjectForm(`${url}/sms`, opened, { action: 'send', phone: '+447911123499' });
    const text = await eventually(async () => {
      const [row] = await database.db.select().from(devMailbox).where(eq(devMailbox.to, '+447911123499'));
      return row?.text;
    }, 15_000);
    expect(text).toMatch(/^Initech IT ?: .*000000/);
  });

  it('the console’s preview draws the subject’s page and mail with values not yet saved', async () => {
    const preview = await owner.query<{ page: string; mail: string }>('console.team.brandingPreview', {
      display_name: 'Initech Helpdesk',
      default_locale: 'ja',
      brand_color: '#7a1fa2',
      support_line: 'Call 1234',
    });
    expect(preview.status, JSON.stringify(preview.error)).toBe(200);
    expect(preview.data?.page).toContain('<html lang="ja" dir="ltr">');
    expect(preview.data?.page).toContain('Initech Helpdesk');
    expect(preview.data?.page).toContain(':root{--accent:#7a1fa2}');
    expect(preview.data?.mail).toContain('background:#7a1fa2');
    expect(preview.data?.mail).toContain('Call 1234');
    // A colour that would be refused is left out of the preview rather than failing it.
    const light = await owner.query<{ page: string }>('console.team.brandingPreview', {
      ...SETTINGS,
      brand_color: '#ffff00',
    });
    expect(light.status).toBe(200);
    expect(light.data?.page).not.toContain('--accent:#ffff00');
    expect((await viewer.query('console.team.brandingPreview', SETTINGS)).status).toBe(403);
  });
});
