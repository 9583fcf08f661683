/**
 * A real SMTP server on 127.0.0.1 (the `smtp-server` package) that keeps every message it receives,
 * plus a small MIME reader so tests can read the confirmation links the way a user would.
 */
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

export interface ReceivedMail {
  /** Envelope recipients (RCPT TO). */
  to: string[];
  /** Envelope sender (MAIL FROM). */
  from: string;
  /** The SMTP user name the sender authenticated with, if any. */
  authUser: string | null;
  subject: string;
  /** The decoded text/plain and text/html bodies joined. */
  body: string;
  raw: string;
}

export interface MailSink {
  port: number;
  mails: ReceivedMail[];
  /** Resolves with the next mail to `to` (or any recipient), waiting up to timeoutMs. */
  waitFor(to?: string, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

/** The SMTP settings that send a server's mail to the sink, unauthenticated. */
export function sinkSettings(sink: MailSink) {
  return {
    smtp_host: "127.0.0.1",
    smtp_port: sink.port,
    smtp_secure: false,
    smtp_from: "noreply@ferry.test",
  };
}

export async function startMailSink(options: { user?: string; password?: string } = {}): Promise<MailSink> {
  const mails: ReceivedMail[] = [];
  const waiters: (() => void)[] = [];
  const server = new SMTPServer({
    secure: false,
    authOptional: !options.user,
    allowInsecureAuth: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onAuth(auth, _session, callback) {
      if (options.user && auth.username === options.user && auth.password === options.password) {
        callback(null, { user: auth.username });
      } else {
        callback(new Error("Invalid username or password"));
      }
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        const parsed = parseMessage(raw);
        mails.push({
          to: session.envelope.rcptTo.map((r) => r.address),
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          authUser: typeof session.user === "string" ? session.user : null,
          subject: parsed.subject,
          body: parsed.body,
          raw,
        });
        for (const wake of waiters.splice(0)) wake();
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;

  let consumed = 0;
  return {
    port,
    mails,
    async waitFor(to, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const index = mails.findIndex((m, i) => i >= consumed && (!to || m.to.includes(to)));
        if (index >= 0) {
          consumed = index + 1;
          return mails[index] as ReceivedMail;
        }
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no mail to ${to ?? "anyone"} within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The confirmation link of a mail: `…/#/confirm?serial_id=…&key=…&action=…`. */
export function confirmLinkOf(mail: ReceivedMail): {
  url: string;
  origin: string;
  serialId: string;
  key: string;
  action: string;
} {
  const match = /(https?:\/\/[^\s"<>]+?)\/#\/confirm\?([^\s"<>]+)/.exec(mail.body);
  if (!match?.[1] || !match[2]) throw new Error(`no confirmation link in mail:\n${mail.body}`);
  const query = new URLSearchParams(match[2].replaceAll("&amp;", "&"));
  return {
    url: match[0],
    origin: match[1],
    serialId: query.get("serial_id") ?? "",
    key: query.get("key") ?? "",
    action: query.get("action") ?? "",
  };
}

// ---- a minimal MIME reader (enough for what nodemailer writes) ----

function splitHeaders(raw: string): { headers: Map<string, string>; body: string } {
  const normalized = raw.replaceAll("\r\n", "\n");
  const end = normalized.indexOf("\n\n");
  const head = end < 0 ? normalized : normalized.slice(0, end);
  const body = end < 0 ? "" : normalized.slice(end + 2);
  const headers = new Map<string, string>();
  let last = "";
  for (const line of head.split("\n")) {
    if (/^\s/.test(line) && last) {
      headers.set(last, `${headers.get(last)} ${line.trim()}`);
      continue;
    }
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    last = line.slice(0, colon).trim().toLowerCase();
    headers.set(last, line.slice(colon + 1).trim());
  }
  return { headers, body };
}

function decodeQuotedPrintable(text: string): Buffer {
  const joined = text.replace(/=\n/g, "");
  const bytes: number[] = [];
  for (let i = 0; i < joined.length; i++) {
    const ch = joined[i] as string;
    if (ch === "=" && /^[0-9A-Fa-f]{2}$/.test(joined.slice(i + 1, i + 3))) {
      bytes.push(Number.parseInt(joined.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(ch, "utf8"));
    }
  }
  return Buffer.from(bytes);
}

function decodeBody(body: string, encoding: string): string {
  switch (encoding.toLowerCase()) {
    case "base64":
      return Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8");
    case "quoted-printable":
      return decodeQuotedPrintable(body).toString("utf8");
    default:
      return body;
  }
}

/** Decodes RFC 2047 encoded words (`=?UTF-8?B?…?=` / `=?UTF-8?Q?…?=`). */
function decodeHeader(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, "?==?")
    .replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (_all, _charset: string, kind: string, text: string) =>
      kind.toUpperCase() === "B"
        ? Buffer.from(text, "base64").toString("utf8")
        : decodeQuotedPrintable(text.replaceAll("_", " ")).toString("utf8"),
    );
}

function leafTexts(raw: string): string[] {
  const { headers, body } = splitHeaders(raw);
  const type = headers.get("content-type") ?? "text/plain";
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (type.toLowerCase().startsWith("multipart/") && boundary) {
    const parts = body.split(`--${boundary}`).slice(1);
    return parts
      .filter((part) => !part.startsWith("--"))
      .flatMap((part) => leafTexts(part.replace(/^\n/, "")));
  }
  return [decodeBody(body, headers.get("content-transfer-encoding") ?? "7bit")];
}

export function parseMessage(raw: string): { subject: string; body: string } {
  const { headers } = splitHeaders(raw);
  return { subject: decodeHeader(headers.get("subject") ?? ""), body: leafTexts(raw).join("\n") };
}
