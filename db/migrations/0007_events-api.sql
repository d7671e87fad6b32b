DROP INDEX "events_team_created_idx";--> statement-breakpoint
ALTER TABLE "events" ALTER COLUMN "data" SET DATA TYPE json;--> statement-breakpoint
CREATE INDEX "events_team_type_created_idx" ON "events" USING btree ("team_id","type","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "events_team_created_idx" ON "events" USING btree ("team_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);