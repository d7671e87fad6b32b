CREATE TABLE "served_base_url" (
	"singleton" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"base_url" text NOT NULL,
	"recorded_at" timestamp with time zone NOT NULL,
	CONSTRAINT "served_base_url_one_row" CHECK ("served_base_url"."singleton")
);
