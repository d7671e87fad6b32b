ALTER TABLE "cases" ADD COLUMN "document_name" text;--> statement-breakpoint
ALTER TABLE "cases" ADD COLUMN "name_match" text DEFAULT 'enforce' NOT NULL;--> statement-breakpoint
ALTER TABLE "verification_templates" ADD COLUMN "name_match" text DEFAULT 'enforce' NOT NULL;--> statement-breakpoint
ALTER TABLE "cases" ADD CONSTRAINT "cases_name_match_check" CHECK ("cases"."name_match" in ('enforce', 'record'));--> statement-breakpoint
ALTER TABLE "verification_templates" ADD CONSTRAINT "verification_templates_name_match_check" CHECK ("verification_templates"."name_match" in ('enforce', 'record'));