import { desc, eq, or, sql } from 'drizzle-orm';
import type { Queryable } from '@/db/client';
import { cases, devMailbox } from '@/db/schema';

const MAILBOX_PAGE = 50;

/**
 * The dev mailbox holds every mail and text message the service would have sent. A console user
 * sees the mail addressed to themselves and the messages about their team's cases (a mail carries
 * the case's `/v/<public_id>` link, a text message its case id), never another member's sign-in
 * links nor another team's messages, even for the same recipient.
 */
export async function listTeamDevMail(db: Queryable, teamId: string, userEmail: string) {
  const aboutTeamCase = sql`exists (select 1 from ${cases} where ${cases.teamId} = ${teamId}
    and (${cases.id} = ${devMailbox.caseId} or position('/v/' || ${cases.publicId} in ${devMailbox.text}) > 0))`;
  return db
    .select()
    .from(devMailbox)
    .where(or(eq(devMailbox.to, userEmail), aboutTeamCase))
    .orderBy(desc(devMailbox.createdAt))
    .limit(MAILBOX_PAGE);
}
