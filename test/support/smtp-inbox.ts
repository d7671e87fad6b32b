import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  /** The HTML part, when the mail has one. */
  html: string | null;
  /** Its Content-Language header, when it has one. */
  language: string | null;
}

export interface SmtpInbox {
  /** Use as SMTP_URL. */
  url: string;
  mails: ReceivedMail[];
  close: () => Promise<void>;
}

/** A received mail as a reader's mail client sees it, parsed by mailparser (parts, encodings, headers). */
export async function parseMail(
  raw: Buffer,
  envelope: { from: string; to: string[] },
): Promise<ReceivedMail> {
  const parsed = await simpleParser(raw);
  const language = parsed.headers.get('content-language');
  return {
    ...envelope,
    subject: parsed.subject ?? '',
    text: parsed.text ?? '',
    html: typeof parsed.html === 'string' ? parsed.html : null,
    language: typeof language === 'string' ? language : null,
  };
}

/** A real SMTP server on a free port that keeps every mail it receives. */
export async function startSmtpInbox(): Promise<SmtpInbox> {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const envelope = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
        };
        parseMail(Buffer.concat(chunks), envelope).then(
          (mail) => {
            mails.push(mail);
            callback();
          },
          (error: Error) => callback(error),
        );
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
