-- The plan catalogue and top-up prices of decisions.md. Operators may edit these rows later;
-- the conflict clauses keep a re-run from overwriting their edits.
INSERT INTO "plans" ("code", "name", "included_units", "trial_days") VALUES
  ('trial', 'Trial', 50, 14),
  ('starter', 'Starter', 500, NULL),
  ('growth', 'Growth', 5000, NULL),
  ('enterprise', 'Enterprise', 100000, NULL)
ON CONFLICT ("code") DO NOTHING;
--> statement-breakpoint
INSERT INTO "method_prices" ("method", "topup_price_cents") VALUES
  ('email', 10),
  ('sms', 25),
  ('government_id', 150),
  ('selfie', 50),
  ('custom_question', 5),
  ('manager', 20)
ON CONFLICT ("method") DO NOTHING;
