CREATE TABLE "redacted_evidence" (
	"case_id" uuid PRIMARY KEY NOT NULL,
	"evidence" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "case_steps" ADD COLUMN "failed_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "body_sha256" text;--> statement-breakpoint
ALTER TABLE "redacted_evidence" ADD CONSTRAINT "redacted_evidence_case_id_cases_id_fk" FOREIGN KEY ("case_id") REFERENCES "public"."cases"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_log_team_target_idx" ON "audit_log" USING btree ("team_id","target");--> statement-breakpoint
-- Steps failed before `failed_at` existed: when their case.failed event was recorded, else (for a
-- case redaction has not touched since) the step's last update.
UPDATE "case_steps" s SET "failed_at" = coalesce(
  (SELECT min(e."created_at") FROM "events" e WHERE e."case_id" = s."case_id" AND e."type" = 'case.failed'),
  CASE WHEN (SELECT c."redacted_at" FROM "cases" c WHERE c."id" = s."case_id") IS NULL THEN s."updated_at" END
) WHERE s."state" = 'failed';
