ALTER TABLE "verification_templates" DROP CONSTRAINT "verification_templates_team_name_unique";--> statement-breakpoint
ALTER TABLE "verification_templates" ADD COLUMN "livemode" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "verification_templates" ADD CONSTRAINT "verification_templates_team_mode_name_unique" UNIQUE("team_id","livemode","name");--> statement-breakpoint
-- Templates were shared by both modes; each now belongs to one. The existing ones stay live (what
-- live cases and live clients use), and each gets a test copy under the same name, so a test key
-- or a test client that named a template keeps finding one (changing the copy changes nothing live).
INSERT INTO "verification_templates" ("team_id", "livemode", "name", "methods", "settings", "locale", "created_at", "updated_at")
SELECT "team_id", false, "name", "methods", "settings", "locale", "created_at", "updated_at"
FROM "verification_templates" WHERE "livemode";--> statement-breakpoint
-- A test client's default template becomes the test copy.
UPDATE "oidc_clients" AS c SET "default_template_id" = copy."id"
FROM "verification_templates" AS live, "verification_templates" AS copy
WHERE NOT c."livemode" AND c."default_template_id" = live."id" AND live."livemode"
  AND copy."team_id" = live."team_id" AND NOT copy."livemode" AND copy."name" = live."name";
