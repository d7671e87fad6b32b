-- A statement that charges a case from the plan's allowance decides, once it holds the team's lock
-- and has counted the units, whether the charge stands (server/billing/queries.ts,
-- allowanceChargeStands). When it does not (the allowance ran out meanwhile, the subscription
-- stopped, an active endpoint needs its delivery's job), this aborts the statement, and with it
-- every write beside the charge; the caller recognises the SQLSTATE and charges the case the long
-- way, under the lock, in a transaction.
CREATE OR REPLACE FUNCTION "vouch_refuse_statement"(reason text) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RAISE EXCEPTION 'statement refused: %', reason USING ERRCODE = 'VX001';
END
$$;
