/**
 * 我的账户 /user_info (seed 000 §2 Profile): avatar, special permissions, e-mail, the three
 * subscription toggles, 重置订阅链接, 我的设备 (issue 29), the Telegram bind section, 两步验证
 * (issue 30) and 保存 (change_use_info).
 */
import { useEffect, useState } from "react";
import { DOWNLOAD_PREFIX } from "../../src/modules/file/schema.ts";
import { ProfileMsg, type UserInfo } from "../../src/modules/user/schema.ts";
import { Code } from "../../src/rpc/codes.ts";
import { call } from "../api.ts";
import { Field } from "../components/Field.tsx";
import { ImageUpload } from "../components/ImageUpload.tsx";
import { DeviceList } from "../components/profile/DeviceList.tsx";
import { PermissionList } from "../components/profile/PermissionList.tsx";
import { ProfileSwitch } from "../components/profile/ProfileSwitch.tsx";
import { TelegramBind } from "../components/profile/TelegramBind.tsx";
import { TwoFactorSection } from "../components/profile/TwoFactor.tsx";
import { useResetSubscription } from "../components/subscribe/reset.tsx";
import { toast } from "../components/Toast.tsx";
import { refreshPermissions, refreshUserInfo, useSession } from "../session.ts";

type ToggleKey = "inXinjiang" | "in_foreign" | "use_english_node";

/**
 * Labels and what each toggle does, as docs/decisions.md "Profile toggles (issue 13)" decides;
 * the labels are the ones /windows_errors tells customers to turn on.
 */
const TOGGLES: readonly { key: ToggleKey; label: string; help: string }[] = [
  {
    key: "inXinjiang",
    label: "释放DNS控制",
    help: "所在网络限制或污染 DNS 时开启。开启后不再在本机解析域名来选择线路：国内常用网站按域名直连，其余网站的域名交给节点服务器解析；Clash、Surge 等客户端的配置改用以 IP 地址填写的 DNS 服务器。保存后请更新订阅。",
  },
  {
    key: "in_foreign",
    label: "国外订阅",
    help: "人在中国大陆以外使用时开启。开启后中国大陆的网站不再直连，也经由节点访问（只有订阅服务器和局域网直连）；同时开启释放DNS控制时改用海外的 DNS 服务器。对 Clash、Surge 等带分流规则的客户端生效。保存后请更新订阅。",
  },
  {
    key: "use_english_node",
    label: "使用英文节点名",
    help: "开启后订阅中的节点名使用英文（如「🇯🇵 日本 01」变为「🇯🇵 Japan 01」），Clash、Surge 的分组名改为 Proxy / Auto，适合不能正常显示中文的设备。保存后请更新订阅。",
  },
];

export const EMAIL_FIXED = "如需修改邮箱请联系客服";

interface ProfileForm {
  /** "" or the download path of an upload, as ImageUpload takes it. */
  icon: string;
  inXinjiang: boolean;
  in_foreign: boolean;
  use_english_node: boolean;
}

/** The user's own upload as the picker's value; the default logo counts as no avatar. */
const uploadedIcon = (icon: string) => (icon.startsWith(DOWNLOAD_PREFIX) ? icon : "");

const formOf = (user: UserInfo): ProfileForm => ({
  icon: uploadedIcon(user.icon),
  inXinjiang: user.inXinjiang,
  in_foreign: user.in_foreign,
  use_english_node: user.use_english_node,
});

const sameForm = (a: ProfileForm, b: ProfileForm) =>
  a.icon === b.icon &&
  a.inXinjiang === b.inXinjiang &&
  a.in_foreign === b.in_foreign &&
  a.use_english_node === b.use_english_node;

function AvatarPreview({ icon, email }: { icon: string; email: string }) {
  if (icon) return <img className="profile-avatar" src={icon} alt="当前头像" width={88} height={88} />;
  return (
    <span className="profile-avatar avatar-letter" role="img" aria-label="当前头像（默认）">
      {(email[0] ?? "?").toUpperCase()}
    </span>
  );
}

function ProfileEditor({ user }: { user: UserInfo }) {
  const session = useSession();
  const [form, setForm] = useState(() => formOf(user));
  const [saving, setSaving] = useState(false);
  const [helpOpen, setHelpOpen] = useState<ToggleKey | null>(null);
  const [reset, resetDialog] = useResetSubscription();
  const changed = !sameForm(form, formOf(user));

  // The permissions shown are the ones the server holds now (a purchase may have added one).
  useEffect(() => {
    void refreshPermissions();
  }, []);

  async function save() {
    setSaving(true);
    const { icon, ...toggles } = form;
    // A field left out keeps its value: the icon goes only when a new one was picked.
    const iconChange = icon === uploadedIcon(user.icon) ? {} : { icon };
    const answer = await call("/api/user/change_use_info", { email: user.email, ...toggles, ...iconChange });
    if (answer.code === Code.ok) {
      toast.success(ProfileMsg.saved);
      // The header's avatar and this form's baseline follow the saved user info.
      await refreshUserInfo();
    } else if (answer.code !== Code.network && answer.code !== Code.notLoggedIn) {
      toast.error(answer.msg ? `${ProfileMsg.saveFailed}：${answer.msg}` : ProfileMsg.saveFailed);
    }
    setSaving(false);
  }

  return (
    <div className="profile-grid">
      <section className="card profile-card" aria-labelledby="profile-basic">
        <h2 id="profile-basic" className="card-title">
          基本资料
        </h2>
        <div className="profile-avatar-row">
          <AvatarPreview icon={form.icon} email={user.email} />
          <div className="profile-avatar-pick">
            <div className="profile-actions">
              <ImageUpload
                value={form.icon}
                onChange={(icon) => setForm({ ...form, icon })}
                label="上传头像"
                shape="round"
                preview={false}
              />
              {form.icon ? (
                <button
                  type="button"
                  className="btn btn-small"
                  onClick={() => setForm({ ...form, icon: "" })}
                >
                  使用默认头像
                </button>
              ) : null}
            </div>
            <p className="card-note">支持 jpg、png、webp，4M 以内；选好后点击「保存」生效。</p>
          </div>
        </div>
        <Field label="邮箱" type="email" value={user.email} readOnly aria-describedby="profile-email-note" />
        <p className="card-note profile-email-note" id="profile-email-note">
          {EMAIL_FIXED}
        </p>
        <fieldset className="profile-switches">
          <legend className="visually-hidden">订阅设置</legend>
          {TOGGLES.map((toggle) => (
            <ProfileSwitch
              key={toggle.key}
              label={toggle.label}
              help={toggle.help}
              checked={form[toggle.key]}
              onChange={(on) => setForm({ ...form, [toggle.key]: on })}
              helpOpen={helpOpen === toggle.key}
              onHelpOpenChange={(open) =>
                setHelpOpen((current) => (open ? toggle.key : current === toggle.key ? null : current))
              }
            />
          ))}
        </fieldset>
        <div className="profile-actions profile-save">
          <button
            type="button"
            className="btn btn-primary"
            disabled={saving || !changed}
            aria-busy={saving}
            onClick={() => void save()}
          >
            {saving ? "保存中…" : "保存"}
          </button>
          {changed ? <span className="card-note">有未保存的修改</span> : null}
        </div>
      </section>

      <div className="profile-side">
        <section className="card profile-card" aria-labelledby="profile-permissions">
          <h2 id="profile-permissions" className="card-title">
            特殊权限
          </h2>
          <PermissionList grants={session.permissions} />
        </section>

        <section className="card profile-card" aria-labelledby="profile-subscription">
          <h2 id="profile-subscription" className="card-title">
            订阅链接
          </h2>
          <p className="card-note">
            订阅链接泄露后，他人可使用您的流量。重置后旧链接立即失效，所有设备都需要重新订阅。
          </p>
          <div className="profile-actions">
            <button type="button" className="btn admin-danger-text" onClick={() => void reset()}>
              重置订阅链接
            </button>
          </div>
          {resetDialog}
        </section>

        {/* A reset removes every device: the list is read again with the new key. */}
        <DeviceList key={user.userkey} />

        {user.is_agency_user ? null : <TelegramBind />}

        <TwoFactorSection />
      </div>
    </div>
  );
}

export function UserInfoPage() {
  const { user } = useSession();
  return (
    <div className="page profile-page">
      <h1 className="page-title">我的账户</h1>
      {/* App shows the spinner and sends visitors to /login before this page renders. */}
      {user ? <ProfileEditor key={user._id} user={user} /> : null}
    </div>
  );
}
