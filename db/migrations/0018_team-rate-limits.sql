ALTER TABLE "teams" ADD COLUMN "rate_limit_read_per_minute" integer;--> statement-breakpoint
ALTER TABLE "teams" ADD COLUMN "rate_limit_write_per_minute" integer;--> statement-breakpoint
ALTER TABLE "teams" ADD CONSTRAINT "teams_rate_limits_positive" CHECK (coalesce("teams"."rate_limit_read_per_minute", 1) > 0 and coalesce("teams"."rate_limit_write_per_minute", 1) > 0);