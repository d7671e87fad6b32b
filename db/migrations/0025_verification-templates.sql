CREATE TABLE "verification_templates" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"team_id" uuid NOT NULL,
	"name" text NOT NULL,
	"methods" jsonb NOT NULL,
	"settings" jsonb NOT NULL,
	"locale" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "verification_templates_team_name_unique" UNIQUE("team_id","name")
);
--> statement-breakpoint
ALTER TABLE "verification_templates" ADD CONSTRAINT "verification_templates_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;