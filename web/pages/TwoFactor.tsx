/**
 * /two_factor (issue 30): the two-factor enrolment page. While 2FA is mandatory for staff
 * (setting totp_required_staff) and not on, the SPA keeps an admin or yunying here (App) and the
 * server refuses their other calls (1041); once it is on, they go on to the home page.
 */
import { TwoFactorSection } from "../components/profile/TwoFactor.tsx";
import { go } from "../lib/nav.ts";
import { logout, refreshAfterLogin, useSession } from "../session.ts";

export function TwoFactorPage() {
  const { user } = useSession();
  const required = user?.mustEnrolTotp === true;

  async function changed() {
    const fresh = await refreshAfterLogin();
    if (required && fresh && !fresh.mustEnrolTotp) go("/", { replace: true });
  }

  return (
    <div className="page page-narrow two-factor-page">
      <h1 className="page-title">两步验证</h1>
      {required ? (
        <p className="two-factor-required" role="alert">
          本站要求管理员和运营账号开启两步验证。开启前无法使用其他功能。
        </p>
      ) : null}
      {user ? <TwoFactorSection onChange={() => void changed()} /> : null}
      {required ? (
        <div className="profile-actions">
          <button type="button" className="btn btn-small" onClick={() => void logout()}>
            退出登录
          </button>
        </div>
      ) : null}
    </div>
  );
}
