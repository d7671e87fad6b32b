-- A team may keep ended cases for a number of days, after which the daily retention job redacts them.
ALTER TABLE "teams" ADD COLUMN "retention_days" integer;--> statement-breakpoint
ALTER TABLE "teams" ADD CONSTRAINT "teams_retention_days_positive" CHECK ("teams"."retention_days" is null or "teams"."retention_days" > 0);