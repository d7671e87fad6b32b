'use client';

import { useQuery } from '@tanstack/react-query';
import { useSession } from '@/app/console/_lib/session';
import { type api, useQueryApi } from '@/app/console/_lib/trpc';
import { CopyButton, ErrorNote, formatCents, formatDate, Loading } from '@/app/console/_lib/ui';
import { methodLabel } from '@/server/api/console/method-vocabulary';
import { RetentionSettings } from './retention-settings';

const STATUS_WORDS: Record<string, string> = {
  trialing: 'Trial',
  active: 'Active',
  past_due: 'Payment overdue',
  canceled: 'Canceled',
};

type Overview = Awaited<ReturnType<typeof api.account.overview.query>>;

/** Cases created and closed per day, as plain SVG bars (no chart library). */
function DailyChart({ days }: { days: Overview['daily'] }) {
  const max = Math.max(1, ...days.map((d) => Math.max(d.created, d.closed)));
  const barWidth = 8;
  const gap = 6;
  const height = 120;
  const width = Math.max(days.length * (barWidth * 2 + gap), 1);
  const total = days.reduce(
    (sum, d) => ({ created: sum.created + d.created, closed: sum.closed + d.closed }),
    {
      created: 0,
      closed: 0,
    },
  );
  return (
    <figure className="c-figure">
      <svg
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        aria-label={`Cases per day this period: ${total.created} created, ${total.closed} closed`}
        preserveAspectRatio="none"
        className="c-daily"
      >
        {days.map((d, i) => {
          const x = i * (barWidth * 2 + gap);
          const created = (d.created / max) * (height - 4);
          const closed = (d.closed / max) * (height - 4);
          return (
            <g key={d.day}>
              <title>{`${d.day}: ${d.created} created, ${d.closed} closed`}</title>
              <rect x={x} y={height - created} width={barWidth} height={created} className="c-bar-created" />
              <rect
                x={x + barWidth}
                y={height - closed}
                width={barWidth}
                height={closed}
                className="c-bar-closed"
              />
            </g>
          );
        })}
      </svg>
      <figcaption>
        <span className="c-key c-bar-created" aria-hidden="true" /> Created ({total.created}){' '}
        <span className="c-key c-bar-closed" aria-hidden="true" /> Closed ({total.closed}) — per UTC day since{' '}
        {days[0]?.day ?? 'the period start'}
      </figcaption>
    </figure>
  );
}

export default function UsagePage() {
  const queries = useQueryApi();
  const overview = useQuery(queries.account.overview.queryOptions());
  const data = overview.data;
  const teamId = useSession().me.current_team?.team_id;
  return (
    <>
      <h1>Usage and account</h1>
      {overview.isPending ? <Loading what="usage" /> : null}
      <ErrorNote error={overview.error} />
      {data ? (
        <>
          {teamId ? (
            <section aria-labelledby="team-id" className="c-row c-wrap">
              {/* The id the operator's command line and support name the team by (--team). */}
              <p className="c-break">
                <span id="team-id">Team id</span> of <strong>{data.team_name}</strong>: <code>{teamId}</code>
              </p>
              <CopyButton value={teamId} label="Copy team id" />
            </section>
          ) : null}
          <dl className="c-facts">
            <div>
              <dt>Plan</dt>
              <dd>{data.plan_name}</dd>
            </div>
            <div>
              <dt>Subscription</dt>
              <dd>
                {STATUS_WORDS[data.subscription_status] ?? data.subscription_status}
                {data.trial_ends_at ? ` (trial ends ${formatDate(data.trial_ends_at)})` : ''}
              </dd>
            </div>
            <div>
              <dt>Billing period</dt>
              <dd>
                {formatDate(data.billing_period_start)} – {formatDate(data.billing_period_end)}
              </dd>
            </div>
            <div>
              <dt>Top-up balance</dt>
              <dd>{formatCents(data.topup_balance_cents)}</dd>
            </div>
          </dl>

          <h2>Units used this period</h2>
          <ul className="c-meters">
            {data.usage.map((u) => (
              <li key={u.method}>
                <div className="c-meter-label">
                  <span>{methodLabel(u.method)}</span>
                  <span className="c-muted">
                    {u.included_used} of {u.allowed} included ({u.percent_used}%)
                    {u.topup_used > 0
                      ? `, ${u.topup_used} from top-up (${formatCents(u.topup_cost_cents)})`
                      : ''}
                  </span>
                </div>
                <meter
                  className="c-meter"
                  aria-label={`${methodLabel(u.method)} allowance used`}
                  min={0}
                  max={Math.max(u.allowed, 1)}
                  value={u.included_used}
                />
              </li>
            ))}
          </ul>

          <h2>Cases per day</h2>
          <DailyChart days={data.daily} />
          <RetentionSettings />
        </>
      ) : null}
    </>
  );
}
