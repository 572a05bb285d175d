import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { freePort } from '../../infrastructure/persistence/embedded-postgres';

export interface ReceivedMail {
  to: string[];
  from: string;
  subject: string;
  text: string;
  html: string;
  messageId: string;
  /** Value of the `lang` attribute of the HTML root element. */
  lang: string | null;
  /** Value of the `dir` attribute of the HTML root element. */
  dir: string | null;
  parsed: ParsedMail;
}

export interface TestSmtp {
  port: number;
  url: string;
  messages: ReceivedMail[];
  /** Mail sent to `address` so far. */
  to(address: string): ReceivedMail[];
  /** Waits for the `n`-th message (1-based) to `address`. */
  /** The n-th message to `address` (counting only those `match` accepts, when given). */
  waitFor(address: string, n?: number, timeoutMs?: number, match?: (mail: ReceivedMail) => boolean): Promise<ReceivedMail>;
  /** Resolves when no new message to `address` has arrived for `quietMs`; returns what arrived. */
  settle(address: string, quietMs?: number): Promise<ReceivedMail[]>;
  /** SMTP connections open right now, and how many were ever opened. */
  connections(): { open: number; opened: number };
  /** Stops listening (connections are refused) until start(). */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

const toAddresses = (m: ParsedMail): string[] => {
  const list = Array.isArray(m.to) ? m.to : m.to ? [m.to] : [];
  return list.flatMap((a) => a.value.map((v) => (v.address ?? '').toLowerCase()));
};

/**
 * A real SMTP server in the test process (smtp-server), parsing every message with mailparser.
 * It can be stopped and restarted on the same port to simulate an outage.
 */
export async function startTestSmtp(): Promise<TestSmtp> {
  // Chosen free, then listened on: another process can take it in between (a client socket's
  // ephemeral port), so the first listen tries another free port. Restarts keep the port.
  let port = 0;
  const messages: ReceivedMail[] = [];
  const waiters = new Set<() => void>();
  let server: SMTPServer | null = null;
  let opened = 0;

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = new SMTPServer({
        authOptional: true,
        disabledCommands: ['STARTTLS', 'AUTH'],
        logger: false,
        onConnect(_session, callback) {
          opened++;
          callback();
        },
        onData(stream, _session, callback) {
          simpleParser(stream)
            .then((parsed) => {
              const html = typeof parsed.html === 'string' ? parsed.html : '';
              messages.push({
                to: toAddresses(parsed),
                from: parsed.from?.text ?? '',
                subject: parsed.subject ?? '',
                text: parsed.text ?? '',
                html,
                messageId: parsed.messageId ?? '',
                lang: /<html[^>]*\slang="([^"]*)"/i.exec(html)?.[1] ?? null,
                dir: /<html[^>]*\sdir="([^"]*)"/i.exec(html)?.[1] ?? null,
                parsed,
              });
              for (const w of waiters) w();
              callback();
            })
            .catch((e: Error) => callback(e));
        },
      });
      s.on('error', () => undefined);
      s.listen(port, '127.0.0.1', () => {
        server = s;
        resolve();
      });
      s.server.once('error', reject);
    });

  const stop = () =>
    new Promise<void>((resolve) => {
      const s = server;
      server = null;
      if (!s) return resolve();
      s.close(() => resolve());
    });

  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      await listen();
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 5) throw e;
    }
  }
  const forAddress = (address: string) => messages.filter((m) => m.to.includes(address.toLowerCase()));

  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    messages,
    to: forAddress,
    waitFor(address, n = 1, timeoutMs = 10_000, match = () => true) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const got = forAddress(address).filter(match);
          if (got.length >= n) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(got[n - 1]!);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no message #${n} to ${address} within ${timeoutMs} ms (got ${forAddress(address).filter(match).length})`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async settle(address, quietMs = 1500) {
      let count = -1;
      while (count !== forAddress(address).length) {
        count = forAddress(address).length;
        await new Promise((r) => setTimeout(r, quietMs));
      }
      return forAddress(address);
    },
    connections: () => ({ open: (server as unknown as { connections?: Set<unknown> } | null)?.connections?.size ?? 0, opened }),
    stop,
    start: listen,
    close: stop,
  };
}

/** The 6-digit code of a verification email. */
export const codeOf = (mail: ReceivedMail): string => {
  const m = /\b(\d{6})\b/.exec(mail.text);
  if (!m) throw new Error(`no code in: ${mail.text}`);
  return m[1]!;
};

/** The first http(s) link of an email's text part. */
export const linkOf = (mail: ReceivedMail): string => {
  const m = /https?:\/\/\S+/.exec(mail.text);
  if (!m) throw new Error(`no link in: ${mail.text}`);
  return m[0];
};
