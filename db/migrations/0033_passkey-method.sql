-- The passkey method's top-up price: like the e-mail link's (a re-verification costs what the
-- cheapest check does). Operators may edit the row later; the conflict clause keeps a re-run from
-- overwriting their edit.
INSERT INTO "method_prices" ("method", "topup_price_cents") VALUES ('passkey', 10)
ON CONFLICT ("method") DO NOTHING;
