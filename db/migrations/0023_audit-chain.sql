CREATE TABLE "audit_chain_heads" (
	"team_id" uuid PRIMARY KEY NOT NULL,
	"seq" bigint DEFAULT 0 NOT NULL,
	"hash" text,
	"checkpoint_seq" bigint,
	"checkpoint_hash" text,
	"checkpoint_jws" text
);
--> statement-breakpoint
ALTER TABLE "audit_log" ADD COLUMN "chain_seq" bigint;--> statement-breakpoint
ALTER TABLE "audit_log" ADD COLUMN "sealed" jsonb;--> statement-breakpoint
ALTER TABLE "audit_log" ADD COLUMN "prev_hash" text;--> statement-breakpoint
ALTER TABLE "audit_log" ADD COLUMN "hash" text;--> statement-breakpoint
ALTER TABLE "team_secrets" ADD COLUMN "evidence_key" text;--> statement-breakpoint
ALTER TABLE "audit_chain_heads" ADD CONSTRAINT "audit_chain_heads_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_log_unsealed_idx" ON "audit_log" USING btree ("team_id") WHERE "audit_log"."hash" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "audit_log_team_chain_idx" ON "audit_log" USING btree ("team_id","chain_seq");