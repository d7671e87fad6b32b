CREATE TABLE "case_import_rows" (
	"import_id" uuid NOT NULL,
	"line" integer NOT NULL,
	"prepared" jsonb,
	"subject_email" text,
	"case_id" uuid,
	"error_code" text,
	"error_detail" text,
	CONSTRAINT "case_import_rows_import_id_line_pk" PRIMARY KEY("import_id","line")
);
--> statement-breakpoint
CREATE TABLE "case_imports" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"team_id" uuid NOT NULL,
	"livemode" boolean DEFAULT true NOT NULL,
	"status" text DEFAULT 'draft' NOT NULL,
	"file_name" text NOT NULL,
	"actor" jsonb NOT NULL,
	"total_rows" integer NOT NULL,
	"valid_rows" integer NOT NULL,
	"created_count" integer DEFAULT 0 NOT NULL,
	"failed_count" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"heartbeat_at" timestamp with time zone,
	CONSTRAINT "case_imports_status_check" CHECK ("case_imports"."status" in ('draft', 'queued', 'running', 'succeeded', 'canceled'))
);
--> statement-breakpoint
ALTER TABLE "case_import_rows" ADD CONSTRAINT "case_import_rows_import_id_case_imports_id_fk" FOREIGN KEY ("import_id") REFERENCES "public"."case_imports"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "case_imports" ADD CONSTRAINT "case_imports_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "case_import_rows_pending_idx" ON "case_import_rows" USING btree ("import_id","line") WHERE "case_import_rows"."case_id" is null and "case_import_rows"."error_code" is null;--> statement-breakpoint
CREATE INDEX "case_imports_team_created_idx" ON "case_imports" USING btree ("team_id","livemode","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "case_imports_in_flight_idx" ON "case_imports" USING btree ("heartbeat_at") WHERE "case_imports"."status" in ('queued', 'running');--> statement-breakpoint
CREATE INDEX "case_imports_created_idx" ON "case_imports" USING btree ("created_at");