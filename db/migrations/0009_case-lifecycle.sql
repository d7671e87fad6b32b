-- Case lifecycle: a case can be canceled (canceled_at), its links sent again (resend_count, last_resent_at)
-- and its personal data erased (redacted_at); mails and dev-mailbox entries name their case, so redaction finds them.
ALTER TABLE "cases" ADD COLUMN "canceled_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "cases" ADD COLUMN "redacted_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "cases" ADD COLUMN "resend_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "cases" ADD COLUMN "last_resent_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "mail_outbox" ADD COLUMN "case_id" uuid;--> statement-breakpoint
CREATE INDEX "dev_mailbox_case_idx" ON "dev_mailbox" USING btree ("case_id");--> statement-breakpoint
CREATE INDEX "mail_outbox_case_idx" ON "mail_outbox" USING btree ("case_id");