import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

export interface SmtpSink {
  url: string;
  mails: ReceivedMail[];
  /**
   * From now on every message's data is held, unanswered, until the returned release is called:
   * the senders stay mid-send (a concurrency test keeps one worker's batch in flight with it).
   * `held()` says how many messages are waiting.
   */
  hold: () => () => void;
  held: () => number;
  close: () => Promise<void>;
}

/**
 * A real SMTP server on 127.0.0.1 that keeps every message it accepts. Recipients whose address
 * starts with `bounce` are refused permanently (550), to test mail that keeps failing.
 */
export async function startSmtpSink(): Promise<SmtpSink> {
  const mails: ReceivedMail[] = [];
  let gate: Promise<void> | null = null;
  let waiting = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (address.address.startsWith('bounce')) {
        return callback(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }));
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', async () => {
        if (gate) {
          waiting += 1;
          await gate;
          waiting -= 1;
        }
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    hold: () => {
      let release = () => {};
      gate = new Promise<void>((resolve) => {
        release = () => {
          gate = null;
          resolve();
        };
      });
      return release;
    },
    held: () => waiting,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
