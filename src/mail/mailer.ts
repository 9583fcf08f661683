import type { Transporter } from "nodemailer";
import { addressKind } from "../lib/addresses.ts";
import { resolveTarget } from "../lib/outbound.ts";
import type { SettingsStore } from "../modules/settings/service.ts";

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

/**
 * Sends mail over the SMTP server in the settings; `configured()` is false until host and from are set.
 * nodemailer is loaded on the first mail, not at start-up: with the Node modules it pulls in it
 * is ~10 MB of an idle server's memory (issue 18). The host is resolved and checked before each
 * mail and the connection goes to that address, named for TLS (lib/outbound.ts).
 */
export class Mailer {
  private transport: Transporter | null = null;
  private transportKey = "";

  constructor(
    private readonly settings: SettingsStore,
    private readonly allowPrivate: boolean,
  ) {}

  async configured(): Promise<boolean> {
    const s = await this.settings.all();
    return s.smtp_host !== "" && s.smtp_from !== "";
  }

  async send(mail: Mail): Promise<void> {
    const s = await this.settings.all();
    if (!(await this.configured())) throw new Error("SMTP is not configured");
    const host = s.smtp_host.trim();
    const address = await resolveTarget(host, this.allowPrivate);
    const { default: nodemailer } = await import("nodemailer");
    const key = JSON.stringify([
      s.smtp_host,
      address,
      s.smtp_port,
      s.smtp_secure,
      s.smtp_user,
      s.smtp_password,
    ]);
    if (!this.transport || key !== this.transportKey) {
      this.transport?.close();
      this.transport = nodemailer.createTransport({
        host: address,
        // The name for SNI and the certificate; an IP host has none (SNI takes no address).
        servername: addressKind(host) === null ? host : undefined,
        port: s.smtp_port,
        secure: s.smtp_secure,
        auth: s.smtp_user ? { user: s.smtp_user, pass: s.smtp_password } : undefined,
        connectionTimeout: 10_000,
        greetingTimeout: 10_000,
        socketTimeout: 20_000,
      });
      this.transportKey = key;
    }
    await this.transport.sendMail({ from: s.smtp_from, ...mail });
  }

  close() {
    this.transport?.close();
    this.transport = null;
  }
}
