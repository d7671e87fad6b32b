import type { Env } from './env';

/** A part that lets a fresh clone work without vendors, and would fake a result in live use. */
export interface StandIn {
  id: 'dev_mailbox' | 'dev_sms' | 'simulated_identity';
  /** Says what a person relying on it would not get, in words for an operator. */
  description: string;
  /** The vendor it stands in for (a verification method declares the vendor it relies on). */
  serves: Vendor;
}

/** The outside services verification methods rely on. */
export type Vendor = 'mail' | 'texts' | 'identity';

/**
 * The stand-ins this configuration would use for live traffic. Test mode always uses them; live
 * mode uses them only when the operator has not configured the real thing.
 */
export function liveStandIns(config: Env): StandIn[] {
  const standIns: StandIn[] = [];
  if (!config.SMTP_URL) {
    standIns.push({
      id: 'dev_mailbox',
      description: 'e-mail is not sent: it is kept in the dev mailbox (set SMTP_URL)',
      serves: 'mail',
    });
  }
  if (config.SMS_PROVIDER === 'dev') {
    standIns.push({
      id: 'dev_sms',
      description: 'text messages are not sent: they are kept in the dev mailbox (set SMS_PROVIDER=twilio)',
      serves: 'texts',
    });
  }
  if (config.IDENTITY_PROVIDER === 'simulated') {
    standIns.push({
      id: 'simulated_identity',
      description: 'identity checks are simulated: any picture passes (set IDENTITY_PROVIDER=stripe)',
      serves: 'identity',
    });
  }
  return standIns;
}

/**
 * The vendors of `vendors` a stand-in serves live: the subject's page says so (the catalogue's
 * `demo.<vendor>`), since what it shows them would prove nothing.
 */
export function subjectStandIns(config: Env, vendors: readonly Vendor[]): Vendor[] {
  return liveStandIns(config)
    .filter((standIn) => vendors.includes(standIn.serves))
    .map((standIn) => standIn.serves);
}

/**
 * In development each stand-in serving live traffic is announced (production refuses them: see
 * production-refusals.ts).
 */
export function announceStandIns(
  config: Env,
  warn: (message: string, fields: Record<string, unknown>) => void,
): void {
  const standIns = liveStandIns(config);
  if (standIns.length === 0) return;
  warn('stand-ins serve live traffic (development only; VOUCH_ENV=production refuses this)', {
    stand_ins: standIns.map((s) => s.description),
  });
}
