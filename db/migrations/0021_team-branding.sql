CREATE TABLE "team_logos" (
	"team_id" uuid PRIMARY KEY NOT NULL,
	"digest" text NOT NULL,
	"content_type" text NOT NULL,
	"image" "bytea" NOT NULL,
	"width" integer NOT NULL,
	"height" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "dev_mailbox" ADD COLUMN "language" text;--> statement-breakpoint
ALTER TABLE "mail_outbox" ADD COLUMN "language" text;--> statement-breakpoint
ALTER TABLE "teams" ADD COLUMN "display_name" text;--> statement-breakpoint
ALTER TABLE "teams" ADD COLUMN "default_locale" text;--> statement-breakpoint
ALTER TABLE "teams" ADD COLUMN "brand_color" text;--> statement-breakpoint
ALTER TABLE "teams" ADD COLUMN "support_line" text;--> statement-breakpoint
ALTER TABLE "teams" ADD COLUMN "logo_digest" text;--> statement-breakpoint
ALTER TABLE "team_logos" ADD CONSTRAINT "team_logos_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "teams" ADD CONSTRAINT "teams_display_name_length" CHECK (char_length("teams"."display_name") between 1 and 30);--> statement-breakpoint
ALTER TABLE "teams" ADD CONSTRAINT "teams_brand_color_hex" CHECK ("teams"."brand_color" ~ '^#[0-9a-f]{6}$');