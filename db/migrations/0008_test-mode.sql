-- Test mode: live and test data of a team kept apart by a `livemode` column (every existing row is live),
-- with the lists' indexes led by (team_id, livemode). The idempotency key's primary key gains the mode
-- after the column exists (drizzle-kit wrote it the other way round).
DROP INDEX "cases_team_created_idx";--> statement-breakpoint
DROP INDEX "cases_team_status_created_idx";--> statement-breakpoint
DROP INDEX "cases_team_email_created_idx";--> statement-breakpoint
DROP INDEX "events_team_created_idx";--> statement-breakpoint
DROP INDEX "events_team_type_created_idx";--> statement-breakpoint
DROP INDEX "webhook_deliveries_team_created_idx";--> statement-breakpoint
DROP INDEX "webhook_endpoints_team_idx";--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD COLUMN "livemode" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "idempotency_keys" DROP CONSTRAINT "idempotency_keys_team_id_key_pk";--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_team_id_livemode_key_pk" PRIMARY KEY("team_id","livemode","key");--> statement-breakpoint
ALTER TABLE "cases" ADD COLUMN "livemode" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "livemode" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "mail_outbox" ADD COLUMN "livemode" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "livemode" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "livemode" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "livemode" boolean DEFAULT true NOT NULL;--> statement-breakpoint
CREATE INDEX "cases_team_created_idx" ON "cases" USING btree ("team_id","livemode","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "cases_team_status_created_idx" ON "cases" USING btree ("team_id","livemode","status","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "cases_team_email_created_idx" ON "cases" USING btree ("team_id","livemode","subject_email","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "events_team_created_idx" ON "events" USING btree ("team_id","livemode","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "events_team_type_created_idx" ON "events" USING btree ("team_id","livemode","type","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "webhook_deliveries_team_created_idx" ON "webhook_deliveries" USING btree ("team_id","livemode","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "webhook_endpoints_team_idx" ON "webhook_endpoints" USING btree ("team_id","livemode","created_at");