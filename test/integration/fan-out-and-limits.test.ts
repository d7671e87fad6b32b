/**
 * Issue 12: webhook fan-out skips an endpoint its team switched off; a case sends at most 5 SMS
 * codes, one every 30 s; ID pictures are limited to 10 MB and to image types, and are never kept
 * (not in any table, not on disk).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caseSteps, webhookDeliveries } from '@/db/schema';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import {
  type Certificate,
  makeCertificate,
  type Receiver,
  startReceiver,
} from '@/test/support/https-receiver';
import { openSubjectPage, postSubjectForm } from '@/test/support/subject-page';
import { startTwilioStandIn, type TwilioStandIn } from '@/test/support/twilio-stand-in';

let database: TestDatabase;
let app: RunningApp;
let certificate: Certificate;
let receiver: Receiver;
let twilio: TwilioStandIn;
/** The app's own temporary directory (its TMPDIR), so that anything it writes there is its own. */
let appTmp: string;
let api: ReturnType<typeof apiClient>;

beforeAll(async () => {
  database = await createTestDatabase();
  certificate = makeCertificate();
  receiver = await startReceiver(certificate);
  twilio = await startTwilioStandIn();
  appTmp = mkdtempSync(path.join(tmpdir(), 'vouch-app-tmp-'));
  app = await startApp({
    databaseUrl: database.url,
    env: {
      TMPDIR: appTmp,
      NODE_EXTRA_CA_CERTS: certificate.certPath,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      SMS_PROVIDER: 'twilio',
      TWILIO_ACCOUNT_SID: twilio.accountSid,
      TWILIO_AUTH_TOKEN: twilio.authToken,
      TWILIO_FROM: '+15005550006',
      TWILIO_API_BASE: twilio.url,
      RATE_LIMIT_READ_PER_MINUTE: '100000',
      RATE_LIMIT_WRITE_PER_MINUTE: '100000',
    },
  });
  const { key } = await createTeam(
    database.db,
    { name: 'Limits', adminEmail: 'owner@limits.test', planCode: 'enterprise' },
    systemClock,
  );
  api = apiClient(app.baseUrl, key.token);
});

afterAll(async () => {
  await app?.stop();
  await receiver?.close();
  await twilio?.close();
  await database?.close();
  if (appTmp) rmSync(appTmp, { recursive: true, force: true });
});

interface CreatedCase {
  id: string;
  public_id: string;
}

async function openCase(methods: Record<string, boolean>): Promise<CreatedCase> {
  const res = await api.post<CreatedCase>('/v1/cases/', {
    subject_email: 'subject@limits.test',
    verification_methods: methods,
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

async function caseRow(id: string) {
  const [row] = await database.sql<{ status: string; failure_reason: string | null; subject_name: string }[]>`
    select status, failure_reason, subject_name from cases where id = ${id}`;
  return row;
}

describe('webhook fan-out', () => {
  it('creates no delivery for an endpoint the team switched off; active and service-disabled ones get theirs', async () => {
    type Endpoint = { id: string };
    const create = async (pathname: string) => {
      const res = await api.post<Endpoint>('/v1/webhooks/endpoints/', {
        url: receiver.url(pathname),
        events: ['case.created'],
      });
      expect(res.status, res.text).toBe(201);
      return res.body.id;
    };
    const on = await create('/fan-out/on');
    const off = await create('/fan-out/off');
    const held = await create('/fan-out/held');
    const switched = await api.patch<{ is_active: boolean }>(`/v1/webhooks/endpoints/${off}/`, {
      is_active: false,
    });
    expect(switched.status).toBe(200);
    expect(switched.body.is_active).toBe(false);
    // As the service disables an endpoint after 15 dead letters (is_active false with disabled_at).
    await database.sql`update webhook_endpoints set is_active = false, disabled_at = now() where id = ${held}`;

    const first = await openCase({ sms: true });
    const deliveriesOf = async (endpointId: string) =>
      database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpointId));

    const [toOn] = await receiver.waitFor('/fan-out/on', 1);
    expect(JSON.parse(toOn?.body ?? '{}')).toMatchObject({
      type: 'case.created',
      data: { case_id: first.id },
    });
    expect(await deliveriesOf(on)).toHaveLength(1);
    expect(await deliveriesOf(off)).toEqual([]);
    const heldDeliveries = await deliveriesOf(held);
    expect(heldDeliveries).toHaveLength(1);
    expect(heldDeliveries[0]?.status).toBe('pending');

    // Switched on again, it gets the next event, and never the one it missed.
    expect((await api.patch(`/v1/webhooks/endpoints/${off}/`, { is_active: true })).status).toBe(200);
    const second = await openCase({ sms: true });
    const [toOff] = await receiver.waitFor('/fan-out/off', 1);
    expect(JSON.parse(toOff?.body ?? '{}')).toMatchObject({ data: { case_id: second.id } });
    await receiver.waitFor('/fan-out/on', 2);
    expect(await deliveriesOf(off)).toHaveLength(1);
    expect(receiver.requestsTo('/fan-out/off')).toHaveLength(1);
    expect(receiver.requestsTo('/fan-out/held')).toEqual([]);
  });
});

describe('SMS codes', () => {
  /** Moves every recorded send of the case's SMS step `seconds` into the past. */
  async function moveSendsBack(caseId: string, seconds: number): Promise<void> {
    const [step] = await database.db
      .select({ settings: caseSteps.settings })
      .from(caseSteps)
      .where(and(eq(caseSteps.caseId, caseId), eq(caseSteps.method, 'sms')));
    const sentAt = (step?.settings.sent_at as string[] | undefined) ?? [];
    const moved = sentAt.map((t) => new Date(Date.parse(t) - seconds * 1000).toISOString());
    await database.db
      .update(caseSteps)
      .set({ settings: sql`jsonb_set(${caseSteps.settings}, '{sent_at}', ${JSON.stringify(moved)}::jsonb)` })
      .where(and(eq(caseSteps.caseId, caseId), eq(caseSteps.method, 'sms')));
  }

  it('sends at most 5 codes per case, a new one at most every 30 s', async () => {
    const created = await openCase({ sms: true });
    const url = `${app.baseUrl}/v/${created.public_id}`;
    const page = await openSubjectPage(url);
    const sentBefore = twilio.messages.length;
    const post = async (fields: Record<string, string>) => {
      const res = await postSubjectForm(`${url}/sms`, page, fields);
      expect(res.status).toBe(303);
      return new URL(res.headers.get('location') ?? '', url).searchParams.get('n');
    };
    const send = { action: 'send', phone: '+44 7911 123456' };
    const resend = { action: 'resend' };

    expect(await post(send)).toBe('sms-sent');
    // At once again: too soon, whether the same number or another.
    expect(await post(resend)).toBe('sms-too-soon');
    expect(await post({ action: 'send', phone: '+1 415 555 2671' })).toBe('sms-too-soon');
    // 25 s later: still too soon.
    await moveSendsBack(created.id, 25);
    expect(await post(resend)).toBe('sms-too-soon');
    expect(twilio.messages.length - sentBefore).toBe(1);

    for (let sends = 2; sends <= 5; sends++) {
      await moveSendsBack(created.id, 31);
      expect(await post(sends % 2 ? resend : send), `send ${sends}`).toBe('sms-sent');
      // Right after it: too soon, or once 5 are out, too many.
      expect(await post(resend), `right after send ${sends}`).toBe(
        sends < 5 ? 'sms-too-soon' : 'sms-too-many',
      );
    }
    expect(twilio.messages.length - sentBefore).toBe(5);

    await moveSendsBack(created.id, 31);
    expect(await post(resend)).toBe('sms-too-many');
    expect(await post({ action: 'send', phone: '+1 415 555 2671' })).toBe('sms-too-many');
    await moveSendsBack(created.id, 3600);
    expect(await post(resend)).toBe('sms-too-many');
    expect(twilio.messages.length - sentBefore).toBe(5);
    const mine = twilio.messages.slice(sentBefore);
    expect(mine.every((m) => m.to === '+447911123456' && m.from === '+15005550006')).toBe(true);

    // The codes that were sent are real: the last one confirms the phone.
    const code = /\b(\d{6})\b/.exec(mine.at(-1)?.body ?? '')?.[1] ?? '';
    expect(await post({ action: 'verify', code })).toBe('sms-verified');
    expect((await caseRow(created.id))?.status).toBe('closed');
  });
});

const MiB = 1024 * 1024;
const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const JPEG = [0xff, 0xd8, 0xff, 0xe0];
const WEBP = [...Buffer.from('RIFF'), 0, 0, 0, 0, ...Buffer.from('WEBPVP8 ')];
const HEIC = [0, 0, 0, 0x18, ...Buffer.from('ftypheic')];
const GIF = [...Buffer.from('GIF89a')];
const PDF = [...Buffer.from('%PDF-1.7\n')];

/** A "picture": the type's magic bytes, then `text`, padded to `size` bytes. */
function picture(magic: number[], text = '', size = 0): Buffer {
  const head = Buffer.concat([Buffer.from(magic), Buffer.from(text, 'latin1')]);
  return size > head.length ? Buffer.concat([head, Buffer.alloc(size - head.length, 0x2e)]) : head;
}

/** Uploads the two pictures through the case page's form, as a browser submits it. */
async function upload(
  publicId: string,
  document: { name: string; bytes: Buffer; type?: string },
  selfie: { name: string; bytes: Buffer; type?: string },
): Promise<string | null> {
  const url = `${app.baseUrl}/v/${publicId}`;
  const page = await openSubjectPage(url);
  const action = page.html.match(/action="([^"]*\/identity\?csrf=[^"]+)"/)?.[1]?.replaceAll('&amp;', '&');
  if (!action) throw new Error('no upload form on the page');
  const form = new FormData();
  form.append(
    'document',
    new Blob([new Uint8Array(document.bytes)], { type: document.type ?? 'image/png' }),
    document.name,
  );
  form.append(
    'selfie',
    new Blob([new Uint8Array(selfie.bytes)], { type: selfie.type ?? 'image/jpeg' }),
    selfie.name,
  );
  const res = await fetch(new URL(action, url), {
    method: 'POST',
    redirect: 'manual',
    headers: { Cookie: page.cookie, 'Sec-Fetch-Site': 'same-origin' },
    body: form,
  });
  expect(res.status).toBe(303);
  return new URL(res.headers.get('location') ?? '', url).searchParams.get('n');
}

async function stepStates(caseId: string): Promise<Record<string, string>> {
  const steps = await database.db
    .select({ method: caseSteps.method, state: caseSteps.state })
    .from(caseSteps)
    .where(eq(caseSteps.caseId, caseId));
  return Object.fromEntries(steps.map((s) => [s.method, s.state]));
}

describe('ID pictures', () => {
  it('refuses a picture over 10 MB with the too-large notice and changes nothing; one under 10 MB is accepted', async () => {
    const refusedCase = await openCase({ government_id: true });
    const over = picture(PNG, 'VOUCH-TEST:NAME=Too Big;', 10 * MiB + 1);
    expect(
      await upload(
        refusedCase.public_id,
        { name: 'id.png', bytes: over },
        { name: 'me.jpg', bytes: picture(JPEG) },
      ),
    ).toBe('identity-too-large');
    const overSelfie = picture(JPEG, '', 10 * MiB + 1);
    expect(
      await upload(
        refusedCase.public_id,
        { name: 'id.png', bytes: picture(PNG) },
        { name: 'me.jpg', bytes: overSelfie },
      ),
    ).toBe('identity-too-large');
    expect(await caseRow(refusedCase.id)).toMatchObject({ status: 'open', failure_reason: null });
    expect(await stepStates(refusedCase.id)).toEqual({ government_id: 'pending', selfie: 'pending' });

    // "Each picture must be smaller than 10 MB": one byte less fits.
    const fits = picture(PNG, 'VOUCH-TEST:NAME=Just Fits;', 10 * MiB - 1);
    expect(
      await upload(
        refusedCase.public_id,
        { name: 'id.png', bytes: fits },
        { name: 'me.jpg', bytes: picture(JPEG) },
      ),
    ).toBe('identity-verified');
    expect(await caseRow(refusedCase.id)).toMatchObject({ status: 'closed', subject_name: 'Just Fits' });
  });

  it('accepts JPEG, PNG, WebP and HEIC pictures, and rejects other types', async () => {
    const first = await openCase({ government_id: true });
    expect(
      await upload(
        first.public_id,
        { name: 'id.jpg', bytes: picture(JPEG), type: 'image/jpeg' },
        { name: 'me.webp', bytes: picture(WEBP), type: 'image/webp' },
      ),
    ).toBe('identity-verified');
    expect(await stepStates(first.id)).toEqual({ government_id: 'verified', selfie: 'verified' });

    const second = await openCase({ government_id: true });
    expect(
      await upload(
        second.public_id,
        { name: 'id.heic', bytes: picture(HEIC), type: 'image/heic' },
        { name: 'me.png', bytes: picture(PNG), type: 'image/png' },
      ),
    ).toBe('identity-verified');
    expect((await caseRow(second.id))?.status).toBe('closed');

    const gif = await openCase({ government_id: true });
    expect(
      await upload(
        gif.public_id,
        { name: 'id.gif', bytes: picture(GIF), type: 'image/gif' },
        { name: 'me.jpg', bytes: picture(JPEG) },
      ),
    ).toBe('identity-rejected');
    expect(await caseRow(gif.id)).toMatchObject({
      status: 'failed',
      failure_reason: 'government_id_rejected',
    });

    const pdf = await openCase({ government_id: true });
    expect(
      await upload(
        pdf.public_id,
        { name: 'id.png', bytes: picture(PNG) },
        { name: 'me.pdf', bytes: picture(PDF), type: 'application/pdf' },
      ),
    ).toBe('identity-rejected');
    expect(await caseRow(pdf.id)).toMatchObject({ status: 'failed', failure_reason: 'selfie_rejected' });
  });

  it('keeps the pictures nowhere: no table holds their bytes and no file is written', async () => {
    const created = await openCase({ government_id: true });
    const marker = `VOUCH-MARKER-${randomBytes(12).toString('hex')}`;
    const document = picture(
      PNG,
      `VOUCH-TEST:NAME=Ada Lovelace;${marker}-document;${randomBytes(64).toString('hex')}`,
    );
    const selfie = picture(JPEG, `${marker}-selfie;${randomBytes(64).toString('hex')}`);

    const appDirectory = process.cwd();
    const before = { app: snapshot(appDirectory), tmp: snapshot(appTmp) };
    expect(
      await upload(
        created.public_id,
        { name: 'passport.png', bytes: document },
        { name: 'selfie.jpg', bytes: selfie },
      ),
    ).toBe('identity-verified');
    const after = { app: snapshot(appDirectory), tmp: snapshot(appTmp) };
    // The pictures were read: the name on the "document" is now the subject's.
    expect(await caseRow(created.id)).toMatchObject({ status: 'closed', subject_name: 'Ada Lovelace' });

    // Not in the database, in any form a column could hold them.
    const needles = [
      marker,
      Buffer.from(marker).toString('hex'),
      ...[document, selfie].flatMap((bytes) => [
        bytes.subarray(0, 48).toString('base64'),
        bytes.subarray(0, 48).toString('base64url'),
        bytes.subarray(0, 48).toString('hex'),
      ]),
    ];
    expect(await columnsContaining(needles, Buffer.from(marker))).toEqual([]);

    // Not on disk: nothing at all in the app's temporary directory, and no file under its working
    // directory that was written during the upload holds the pictures' bytes (the directory is
    // shared with the test database's files and other work, so it is judged by content).
    expect(changedFiles(before.tmp, after.tmp)).toEqual([]);
    const written = changedFiles(before.app, after.app).filter((file) => {
      try {
        const stats = statSync(file);
        return stats.isFile() && stats.size < 256 * MiB && readFileSync(file).includes(marker, 0, 'latin1');
      } catch {
        return false; // removed since (another build's or the database's temporary file)
      }
    });
    expect(written).toEqual([]);
  });
});

type Snapshot = Map<string, string>;

/** Every file under `root` (but dependencies and git objects) with its size and modification time. */
function snapshot(root: string): Snapshot {
  const files: Snapshot = new Map();
  const walk = (dir: string) => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return; // gone meanwhile, or not ours to read
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && entry.name !== '.git') walk(full);
      } else if (entry.isFile()) {
        const stats = statSync(full, { throwIfNoEntry: false });
        if (stats) files.set(full, `${stats.size}:${stats.mtimeMs}`);
      }
    }
  };
  walk(root);
  return files;
}

function changedFiles(before: Snapshot, after: Snapshot): string[] {
  return [...after].filter(([file, stamp]) => before.get(file) !== stamp).map(([file]) => file);
}

/**
 * Every text, JSON, array and bytea column of every table (ours and pg-boss's) in which one of
 * `needles` occurs (bytea columns are searched for `bytes`), as `schema.table.column`.
 */
async function columnsContaining(needles: string[], bytes: Buffer): Promise<string[]> {
  const columns = await database.sql<{ schema: string; table: string; column: string; type: string }[]>`
    select c.table_schema as schema, c.table_name as table, c.column_name as column, c.data_type as type
      from information_schema.columns c
      join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
     where t.table_type = 'BASE TABLE'
       and c.table_schema not in ('pg_catalog', 'information_schema')
       and (c.data_type in ('text', 'character varying', 'character', 'json', 'jsonb', 'bytea', 'ARRAY'))`;
  expect(columns.length).toBeGreaterThan(20);
  const found: string[] = [];
  for (const { schema, table, column, type } of columns) {
    const [row] =
      type === 'bytea'
        ? await database.sql<{ hits: number }[]>`
            select count(*)::int as hits from ${database.sql(schema)}.${database.sql(table)}
             where position(${bytes} in ${database.sql(column)}) > 0`
        : await database.sql<{ hits: number }[]>`
            select count(*)::int as hits from ${database.sql(schema)}.${database.sql(table)}
             where exists (select 1 from jsonb_array_elements_text(${JSON.stringify(needles)}::jsonb) as needle
                            where position(needle in ${database.sql(column)}::text) > 0)`;
    if ((row?.hits ?? 0) > 0) found.push(`${schema}.${table}.${column}`);
  }
  return found;
}
