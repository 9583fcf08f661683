/**
 * A client's subscribe button: a dropdown with 一键导入, 复制订阅, 扫描二维码 (when asked for) and
 * 重置订阅链接. Every item checks the seed 000 §5 rules first and toasts the refusal.
 */
import { type MouseEvent, type ReactNode, useState } from "react";
import { SITE_NAME } from "../../routes.ts";
import { refreshUserInfo, useSession } from "../../session.ts";
import { copyToClipboard } from "../clipboard.ts";
import { Dropdown, menuItemProps } from "../Dropdown.tsx";
import { detectPlatform, isMobile } from "../platform.ts";
import { QrDialog } from "../QrDialog.tsx";
import { toast } from "../Toast.tsx";
import { type SubscribeClient, userSubscriptionUrl, XRAY_JSON_KEY } from "./clients.ts";
import { importLink } from "./deepLinks.ts";
import { useResetSubscription } from "./reset.tsx";
import { type SubscribeAction, SubscribeMsg, subscribeRefusal } from "./rules.ts";

export interface SubscribeMenuProps {
  client: SubscribeClient;
  /** Offer 扫描二维码. */
  withQr: boolean;
  /** The button's content; 订阅 ▾ when not given. */
  trigger?: ReactNode;
  /**
   * The button's accessible name, `订阅 <client>` when not given. It must contain the trigger's
   * visible words (WCAG 2.5.3 label in name), so a voice user can say what they see.
   */
  label?: string;
  triggerClassName?: string;
}

export function qrDescription(name: string, mobile: boolean): string {
  return mobile
    ? `请截图保存二维码，在另一台设备上打开 ${name}，从相册识别二维码添加订阅。`
    : `请打开手机上的 ${name}，扫描下方二维码添加订阅。`;
}

export function SubscribeMenu({ client, withQr, trigger, label, triggerClassName }: SubscribeMenuProps) {
  const { user, host } = useSession();
  const [open, setOpen] = useState(false);
  const [qrOpen, setQrOpen] = useState(false);
  const [reset, resetDialog] = useResetSubscription();
  const url = user ? userSubscriptionUrl(client.key, user) : "";
  const mobile = isMobile();

  /** True when `action` may go ahead; otherwise says why. Closes the dropdown either way. */
  function allowed(action: SubscribeAction): boolean {
    setOpen(false);
    const refusal = subscribeRefusal(action, client, { user, platform: detectPlatform(), mobile });
    if (!refusal) return true;
    toast.error(refusal.message);
    if (refusal.refreshUser) void refreshUserInfo();
    return false;
  }

  const onImport = (event: MouseEvent) => {
    if (!allowed("import")) event.preventDefault();
  };
  const onCopy = () => {
    if (allowed("copy")) void copyToClipboard(url, { failed: SubscribeMsg.copyFailed });
  };
  const onCopyJson = () => {
    if (allowed("copy") && user)
      void copyToClipboard(userSubscriptionUrl(XRAY_JSON_KEY, user), { failed: SubscribeMsg.copyFailed });
  };
  const onQr = () => {
    if (allowed("qr")) setQrOpen(true);
  };
  const onReset = () => {
    if (allowed("reset")) void reset();
  };

  return (
    <>
      <Dropdown
        open={open}
        onOpenChange={setOpen}
        label={label ?? `订阅 ${client.name}`}
        trigger={trigger ?? <>订阅 ▾</>}
        triggerClassName={triggerClassName ?? "btn btn-primary btn-small"}
        align="start"
        className="subscribe-dropdown"
        menu
      >
        <div className="subscribe-menu">
          {client.deepLink ? (
            <a
              {...menuItemProps}
              className="subscribe-item"
              href={url ? importLink(client.deepLink, url, SITE_NAME, host ?? undefined) : "#/"}
              onClick={onImport}
            >
              一键导入
            </a>
          ) : null}
          <button type="button" {...menuItemProps} className="subscribe-item" onClick={onCopy}>
            复制订阅
          </button>
          {client.xrayJson ? (
            <button type="button" {...menuItemProps} className="subscribe-item" onClick={onCopyJson}>
              复制 Xray JSON 订阅
            </button>
          ) : null}
          {withQr ? (
            <button type="button" {...menuItemProps} className="subscribe-item" onClick={onQr}>
              扫描二维码
            </button>
          ) : null}
          <button
            type="button"
            {...menuItemProps}
            className="subscribe-item subscribe-item-danger"
            onClick={onReset}
          >
            重置订阅链接
          </button>
        </div>
      </Dropdown>
      {withQr ? (
        <QrDialog
          open={qrOpen && url !== ""}
          onClose={() => setQrOpen(false)}
          title={`${client.name} 扫码订阅`}
          description={qrDescription(client.name, mobile)}
          value={url}
        />
      ) : null}
      {resetDialog}
    </>
  );
}
