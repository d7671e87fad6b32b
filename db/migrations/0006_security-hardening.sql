ALTER TABLE "auth_users" ADD COLUMN "one_time_password_expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "dev_mailbox" ADD COLUMN "case_id" uuid;--> statement-breakpoint
-- One-time passwords printed before this change get their 7 days from now on.
UPDATE "auth_users" SET "one_time_password_expires_at" = now() + interval '7 days' WHERE "password_change_required";
--> statement-breakpoint
-- Owners made by the CLI: their password is the operator's, not an intruder's (see createTeamOwner).
UPDATE "auth_users" SET "email_verified" = true WHERE "id" IN (SELECT "user_id" FROM "auth_accounts" WHERE "provider_id" = 'credential');
--> statement-breakpoint
-- Audit entries are written at the clock's millisecond instant; earlier ones are truncated to it,
-- so the log's page cursor (a millisecond timestamp) matches them exactly.
UPDATE "audit_log" SET "created_at" = date_trunc('milliseconds', "created_at");
